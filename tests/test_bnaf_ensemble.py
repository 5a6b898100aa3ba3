"""Stacked BNAF training: each member is its single fit (to float rounding), stops as it would, and is cached apart."""

import numpy as np
import pytest

from vrlib.cache import Cache
from vrlib.density import BNAF
from vrlib.density import bnaf_ensemble as be
from vrlib.errors import VrlibError

TINY = dict(n_flows=2, n_layers=2, hidden_per_dim=8, epochs=4, batch_size=64, compile=False)


def _data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)


def _query(d=3):
    return np.random.default_rng(99).normal(size=(40, d)) * 1.5


def test_each_member_is_its_single_fit():
    # unequal sizes (a last batch of another length, more batches for some members) and per-member
    # epochs, learning rates and patience: every member must follow its own single fit
    datasets = [_data(300, seed=1), _data(257, seed=2), _data(420, seed=3), _data(300, seed=4)]
    params = [
        dict(TINY, seed=11),
        dict(TINY, seed=12, epochs=2),
        dict(TINY, seed=13, lr=3e-3),
        dict(TINY, seed=14, epochs=6, patience=2, lr_patience=1),
    ]
    singles = [BNAF(**p).fit(X) for p, X in zip(params, datasets)]
    stacked = be.fit_bnaf_ensemble([BNAF(**p) for p in params], datasets)
    Q = _query()
    for one, member in zip(singles, stacked):
        assert member.best_epoch_ == one.best_epoch_
        assert [h[0] for h in member.history_] == [h[0] for h in one.history_]
        np.testing.assert_allclose(np.array(member.history_), np.array(one.history_), rtol=1e-4)
        # float32 rounding in another order: a few ulps of log density after hundreds of steps
        np.testing.assert_allclose(member.log_density(Q), one.log_density(Q), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(member.mean_, one.mean_)
        assert member.trainer_ == be.TRAINER and not member.compiled_


def test_a_member_does_not_depend_on_its_companions():
    X = _data(300, seed=5)
    alone = be.fit_bnaf_ensemble([BNAF(**TINY, seed=7)], [X])[0]
    with_others = be.fit_bnaf_ensemble(
        [BNAF(**TINY, seed=1), BNAF(**TINY, seed=7), BNAF(**dict(TINY, seed=3, epochs=1))],
        [_data(200, seed=6), X, _data(500, seed=8)],
    )[1]
    np.testing.assert_allclose(alone.log_density(_query()), with_others.log_density(_query()), rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.array(alone.history_), np.array(with_others.history_), rtol=1e-6)


def test_early_stopping_per_member_as_in_the_single_fit():
    # a learning rate far too high makes the validation loss stall: patience 1 stops these fits early
    X = _data(400, seed=9)
    params = [dict(TINY, epochs=30, patience=1, lr=0.3, seed=s) for s in (1, 2, 3)]
    singles = [BNAF(**p).fit(X) for p in params]
    assert any(len(one.history_) < 30 for one in singles), "the case must make some fit stop early"
    stacked = be.fit_bnaf_ensemble([BNAF(**p) for p in params], [X] * 3)
    for one, member in zip(singles, stacked):
        assert len(member.history_) == len(one.history_)
        assert member.best_epoch_ == one.best_epoch_


def test_the_stack_learns():
    X = _data(600, seed=10)
    member = be.fit_bnaf_ensemble([BNAF(**dict(TINY, epochs=8), seed=0)], [X])[0]
    assert member.history_[-1][2] < member.history_[0][2] - 0.1


def test_bad_ensembles_raise_clear_errors():
    with pytest.raises(VrlibError, match="share"):
        be.fit_bnaf_ensemble([BNAF(**TINY), BNAF(**dict(TINY, hidden_per_dim=4))], [_data(100), _data(100)])
    with pytest.raises(VrlibError, match="share"):
        be.fit_bnaf_ensemble([BNAF(**TINY), BNAF(**TINY)], [_data(100, d=3), _data(100, d=2)])
    with pytest.raises(VrlibError, match="one dataset per flow"):
        be.fit_bnaf_ensemble([BNAF(**TINY)], [_data(100), _data(100)])
    with pytest.raises(VrlibError, match="BNAF flows only"):
        be.fit_bnaf_ensemble([object()], [_data(100)])
    with pytest.raises(VrlibError, match="NaN"):
        be.fit_bnaf_ensemble([BNAF(**TINY)], [np.full((10, 2), np.nan)])


def test_fit_keys_name_the_trainer_the_data_and_every_parameter():
    X = _data(100)
    key = be.fit_key(dict(TINY, seed=1), X)
    assert key == be.fit_key(dict(TINY, seed=1, verbose=True), X)
    assert key != be.fit_key(dict(TINY, seed=2), X)
    assert key != be.fit_key(dict(TINY, seed=1), X + 1e-9)
    assert key != be.fit_key(dict(TINY, seed=1, patience=3), X)


def test_fit_flows_caches_each_fit_and_fits_only_what_is_missing(tmp_path, monkeypatch):
    cache = Cache(root=tmp_path, namespace="bnaf-fits")
    jobs = [(dict(TINY, seed=s), _data(150 + 10 * s, seed=s)) for s in range(4)]
    first = be.fit_flows(jobs[:2], cache=cache, n_jobs=1)
    assert len(cache) == 2
    fitted = []
    real = be.fit_bnaf_ensemble

    def counting(estimators, datasets, **kw):
        fitted.append(len(estimators))
        return real(estimators, datasets, **kw)

    monkeypatch.setattr(be, "fit_bnaf_ensemble", counting)
    again = be.fit_flows(jobs, cache=cache, n_jobs=1)
    assert fitted == [2]  # the two cached fits are read, not made again
    assert len(cache) == 4
    Q = _query()
    for a, b in zip(first, again[:2]):
        np.testing.assert_array_equal(a.log_density(Q), b.log_density(Q))
        assert a.history_ == b.history_ and a.best_epoch_ == b.best_epoch_
    # a fresh fit equals its cached copy
    np.testing.assert_array_equal(be.fit_flows(jobs[3:], n_jobs=1)[0].log_density(Q), again[3].log_density(Q))
    # flows of another shape go to another stack
    fitted.clear()
    other = (dict(TINY, seed=9, hidden_per_dim=4), _data(120, seed=9))
    be.fit_flows([*jobs, other, (dict(TINY, seed=10), _data(130, d=2, seed=10))], cache=cache, n_jobs=1)
    assert sorted(fitted) == [1, 1]


def test_domias_scores_under_the_stacked_trainer(tmp_path, monkeypatch):
    from vrlib.experiments import domias_scoring as ds

    monkeypatch.setenv("VRLIB_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    flow = dict(n_flows=2, n_layers=2, hidden_per_dim=4, epochs=2, batch_size=64, patience=2)
    ref = _data(200, seed=1)
    settings_list = [
        ds.Setting(s, _data(150, seed=10 + s), ref, ("ref", 0), _data(30, seed=20 + s), rng.integers(0, 2, 30))
        for s in range(3)
    ]
    attacks = ("domias_flow", "eq1_flow", "domias_kde", "mc")  # a baseline beside them fits no density
    single = ds.score_settings(settings_list, attacks, {"flow": flow}, cache=False, n_jobs=1)
    stacked_settings = {"flow": flow, "flow_trainer": "ensemble"}
    stacked = ds.score_settings(settings_list, attacks, stacked_settings, cache=True, n_jobs=1)
    for a, b in zip(single, stacked):
        for name in attacks:  # the same flows to float rounding, so the same scores
            np.testing.assert_allclose(b[name][0], a[name][0], rtol=1e-4, atol=1e-4)
    assert len(Cache(namespace="bnaf-fits")) == 4  # one p_R and three p_G
    # the trainer is in the key of the flow scores only
    for name in attacks:
        k_single = ds.score_key("s", name, {"flow": flow}, 0, 30)
        k_stacked = ds.score_key("s", name, stacked_settings, 0, 30)
        assert (k_single != k_stacked) == name.endswith("_flow")
    # run again: every score and every flow comes from the cache, nothing is fitted
    monkeypatch.setattr(be, "fit_bnaf_ensemble", lambda *a, **k: pytest.fail("refitted a cached flow"))
    again = ds.score_settings(settings_list, attacks, stacked_settings, cache=True, n_jobs=1)
    for a, b in zip(stacked, again):
        for name in attacks:
            np.testing.assert_array_equal(a[name][0], b[name][0])
    with pytest.raises(VrlibError, match="flow_trainer"):
        ds.flow_trainer({"flow_trainer": "stacked"})
    assert ds.flow_trainer({}) == "single"
    monkeypatch.setenv("VRLIB_FLOW_TRAINER", "ensemble")
    assert ds.flow_trainer({}) == "ensemble" and ds.flow_trainer({"flow_trainer": "single"}) == "single"
    monkeypatch.setenv("VRLIB_FLOW_TRAINER", "fast")
    with pytest.raises(VrlibError, match="VRLIB_FLOW_TRAINER"):
        ds.flow_trainer({})


def test_stacks_split_over_workers_give_the_same_flows():
    jobs = [(dict(TINY, epochs=2, seed=s), _data(150, seed=30 + s)) for s in range(6)]
    spread = be.fit_flows(jobs, n_jobs=2, min_members=2)  # stacks of 3 in two worker processes
    together = be.fit_flows(jobs, n_jobs=1)  # one stack of 6 here
    Q = _query()
    for a, b in zip(spread, together):
        np.testing.assert_array_equal(a.log_density(Q), b.log_density(Q))


def _stack_of(models):
    import torch

    weights = torch.stack([torch.nn.utils.parameters_to_vector(m.parameters()).detach() for m in models])
    return be._Stack(models[0], weights.clone())


def test_stacked_gradients_are_each_flows_autograd_gradients_and_clip_as_clip_grad_norm():
    import torch

    from vrlib.density.bnaf import _build_bnaf

    d = 4
    models = [_build_bnaf(d, 2, 2, 6, torch.Generator().manual_seed(s)) for s in range(3)]
    stack = _stack_of(models)
    batch = torch.randn(3, 20, d, generator=torch.Generator().manual_seed(0))
    weight = torch.ones(3, 20)
    weight[1, 15:] = 0  # member 1: a short batch (5 padded rows)
    clip = torch.tensor([0.1, 0.1, 1e6])  # member 2: clipping out of reach
    losses, ok, grad_scale, skip = stack.gradients(batch, weight, clip)
    assert ok.all() and not skip.any()
    for k, model in enumerate(models):
        rows = batch[k, : int(weight[k].sum())]
        loss = -model(rows).mean()  # autograd through the single flow: the independent computation
        model.zero_grad()
        loss.backward()
        expected = torch.cat([p.grad.flatten() for p in model.parameters()])
        assert torch.allclose(losses[k], loss.detach(), rtol=1e-5)
        torch.testing.assert_close(stack.grad[k], expected, rtol=1e-4, atol=1e-5)
        norm = float(torch.linalg.vector_norm(expected))
        coef = min(float(clip[k]) / (norm + 1e-6), 1.0)
        assert float(grad_scale[k]) == pytest.approx(1 / coef, rel=1e-5)
    assert float(grad_scale[2]) == 1.0


def test_a_step_without_rows_or_with_a_diverging_loss_is_skipped():
    import torch

    from vrlib.density.bnaf import _build_bnaf

    models = [_build_bnaf(3, 1, 1, 4, torch.Generator().manual_seed(s)) for s in range(3)]
    stack = _stack_of(models)
    batch = torch.randn(3, 10, 3)
    batch[2, 0, 0] = float("inf")  # member 2's loss is not finite
    weight = torch.ones(3, 10)
    weight[1] = 0  # member 1 has no rows this step
    before = stack.weights.clone()
    leaves = [stack.weights[r].detach().requires_grad_(True) for r in range(3)]
    opts = [torch.optim.Adam([leaf], lr=0.01, amsgrad=True, fused=True) for leaf in leaves]
    losses, ok, grad_scale, skip = stack.gradients(batch, weight, torch.full((3,), 0.1))
    assert ok.tolist() == [True, False, False] and skip.tolist() == [0.0, 1.0, 1.0]
    for r, (leaf, opt) in enumerate(zip(leaves, opts)):
        leaf.grad = stack.grad[r]
        opt.grad_scale, opt.found_inf = grad_scale[r], skip[r]
        opt.step()
    assert not torch.equal(stack.weights[0], before[0])  # the member with a finite loss stepped
    for r in (1, 2):  # the others did not, and their step counts stayed at 0, as BNAF.fit's `continue`
        assert torch.equal(stack.weights[r], before[r])
        assert float(opts[r].state[leaves[r]]["step"]) == 0


def test_a_failing_cuda_graph_capture_warns_once_and_trains_on_unchanged(monkeypatch):
    X = _data(200, seed=12)
    plain = be.fit_bnaf_ensemble([BNAF(**TINY, seed=s) for s in (1, 2)], [X, X], graphs=False)

    def fail(self, batch, weight):
        raise RuntimeError("no capture here")

    monkeypatch.setattr(be, "_graphs_wanted", lambda device, graphs: graphs)
    monkeypatch.setattr(be._Step, "_capture", fail)
    monkeypatch.setattr(be._Step, "_warned", False)
    with pytest.warns(UserWarning, match="CUDA graph capture") as record:
        graphed = be.fit_bnaf_ensemble([BNAF(**TINY, seed=s) for s in (1, 2)], [X, X], graphs=True)
    assert sum("CUDA graph capture" in str(w.message) for w in record) == 1
    for a, b in zip(plain, graphed):
        np.testing.assert_array_equal(a.log_density(_query()), b.log_density(_query()))
        assert a.history_ == b.history_


def test_the_device_is_read_once_per_epoch_not_once_per_step(monkeypatch):
    # on a GPU every read of a tensor's value on the host waits for the device: the stack reads
    # its losses once per epoch (validation and training means), never per step
    import torch

    reads = []
    for name in ("item", "tolist", "__float__", "__bool__", "__int__"):
        real = getattr(torch.Tensor, name)

        def counting(self, *args, _real=real, _name=name, **kwargs):
            reads.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counting)
    epochs = 3
    params = dict(TINY, epochs=epochs, patience=epochs + 1, batch_size=16)
    stacked = be.fit_bnaf_ensemble([BNAF(**params, seed=s) for s in (1, 2)], [_data(300, seed=13)] * 2)
    steps = epochs * -(-270 // 16)  # 270 training rows in batches of 16
    assert all(len(m.history_) == epochs for m in stacked)
    assert 0 < len(reads) <= 2 * epochs, reads  # the validation losses and the training means
    assert steps > 10 * epochs  # the case has many steps per epoch, so a read per step would show
