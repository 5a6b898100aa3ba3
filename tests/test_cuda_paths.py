"""The GPU paths against the CPU ones: run only where CUDA is present (skipped elsewhere).

The CPU tests (test_bnaf_ensemble.py, test_wgan_ensemble.py) show that a stacked member is its
single fit on a CPU; these show what the CUDA paths add — the CUDA-graph step against the
plain step, a stacked member against its single fit on the GPU, and the GPU's fits against the
CPU's of the same seeds (the same to rounding where the draws are the same, else the same in
distribution).  Run them on a machine with a GPU: ``pytest tests/test_cuda_paths.py``.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from vrlib.density import BNAF  # noqa: E402
from vrlib.density import bnaf_ensemble as be  # noqa: E402
from vrlib.generators.wgan import WGANGP  # noqa: E402
from vrlib.generators.wgan_ensemble import fit_wgan_ensemble  # noqa: E402

from test_bnaf_ensemble import TINY as FLOW  # noqa: E402
from test_bnaf_ensemble import _data, _query  # noqa: E402
from test_wgan_ensemble import SCHEMA, gap, table  # noqa: E402


def _flows(device, graphs):
    datasets = [_data(300, seed=1), _data(257, seed=2), _data(420, seed=3)]
    params = [dict(FLOW, seed=11), dict(FLOW, seed=12, epochs=2), dict(FLOW, seed=13, lr=3e-3)]
    stacked = be.fit_bnaf_ensemble([BNAF(**p) for p in params], datasets, device=device, graphs=graphs)
    return params, datasets, stacked


def test_bnaf_stack_with_cuda_graphs_is_the_plain_cuda_stack():
    _, _, graphed = _flows("cuda", graphs=True)
    _, _, plain = _flows("cuda", graphs=False)
    for a, b in zip(graphed, plain):
        assert a.best_epoch_ == b.best_epoch_
        np.testing.assert_allclose(a.log_density(_query()), b.log_density(_query()), rtol=1e-4, atol=1e-4)


def test_bnaf_cuda_stack_members_are_their_single_fits_on_cpu():
    params, datasets, stacked = _flows("cuda", graphs=True)
    singles = [BNAF(**p, device="cpu").fit(X) for p, X in zip(params, datasets)]
    for one, member in zip(singles, stacked):
        assert member.best_epoch_ == one.best_epoch_
        # another device's float32 kernels: a looser tolerance than the CPU stack's 1e-4
        np.testing.assert_allclose(member.log_density(_query()), one.log_density(_query()), rtol=1e-3, atol=1e-3)


def test_a_wrong_seed_is_told_apart_on_cuda():
    # the tolerance above must be able to fail: another seed gives another flow
    params, datasets, stacked = _flows("cuda", graphs=True)
    other = BNAF(**dict(params[0], seed=99), device="cpu").fit(datasets[0])
    assert np.abs(stacked[0].log_density(_query()) - other.log_density(_query())).max() > 1e-2


def _wgans(device, rng, graph, seeds=(11, 12, 13), sizes=(230, 330, 240)):
    dfs = [table(s, n) for s, n in zip((0, 1, 2), sizes)]
    return fit_wgan_ensemble(
        [WGANGP(epochs=3, batch_size=50) for _ in seeds], dfs, SCHEMA, list(seeds), device=device, rng=rng, graph=graph
    )


def test_wgan_stack_cuda_graph_is_the_plain_cuda_step():
    # the replayed graph draws what the plain steps draw (the capture's warm-up gives its draws
    # back), so the two train the same networks; a fallback to plain steps would hide the graph
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graphed = _wgans("cuda", "shared", True)
        short = _wgans("cuda", "shared", True, sizes=(120, 150, 130))  # one or two batches an epoch
    assert not [w for w in caught if "CUDA graph" in str(w.message)]
    plain = _wgans("cuda", "shared", False)
    assert all(np.isfinite(m.losses_.to_numpy()).all() for m in short)
    for a, b in zip(graphed, plain):
        assert gap(a, b) < 5e-4
        np.testing.assert_allclose(a.losses_.to_numpy(), b.losses_.to_numpy(), atol=1e-4)


def test_wgan_member_draws_on_cuda_are_the_cpu_stack():
    # rng="member": every draw is the member's single fit's, made on the host, so the GPU must
    # follow the CPU stack to float rounding
    gpu = _wgans("cuda", "member", False)
    cpu = _wgans("cpu", "member", False)
    for a, b in zip(gpu, cpu):
        assert gap(a, b) < 5e-3
    assert gap(gpu[0], cpu[1]) > 5e-2  # and the check can fail: another member is far


def test_wgan_on_cuda_learns_what_it_learns_on_cpu():
    # a longer single fit each way; the marginals of what they sample must agree with the data's
    df = table(0, 2000)
    fits = {d: WGANGP(epochs=40, batch_size=100, device=d).fit(df, SCHEMA, 0) for d in ("cpu", "cuda")}
    for d, fit in fits.items():
        s = fit.sample(2000, seed=1)
        assert abs(s["c"].mean() - df["c"].mean()) < 0.3, d
        assert abs((s["a"] == "x").mean() - (df["a"] == "x").mean()) < 0.15, d


def test_attention_on_cuda_trains_with_autograd_by_default(monkeypatch):
    """gradients="auto" on a GPU: autograd (the hand-written pass is the CPU's default)."""
    from test_attention_features_torch import SCHEMA as ATT_SCHEMA
    from test_attention_features_torch import _pool, spy_backprop

    from vrlib.attacks.attention import AttentionAttack

    built = spy_backprop(monkeypatch)
    rng = np.random.default_rng(8)
    datasets = [_pool(rng, 20) for _ in range(10)]
    AttentionAttack(ATT_SCHEMA, top_x=5, max_epochs=1, device="cuda").fit(datasets, np.arange(10) % 2, _pool(rng, 1))
    assert not built
    AttentionAttack(ATT_SCHEMA, top_x=5, max_epochs=1, device="cuda", gradients="hand-written").fit(
        datasets, np.arange(10) % 2, _pool(rng, 1)
    )
    assert len(built) == 1


def test_attention_grouped_on_cuda_stops_each_target_as_alone():
    """A group of 3 on the GPU: each target stops at the epochs it stops at alone, its validation losses close.

    On a CPU the two agree to 1e-5 (test_attention_attack.py); on one H200 the GPU's float orders
    left them 8e-4 apart (relative) by the 8th epoch, with the same stopping epochs."""
    from test_attention_attack import grouped_and_alone

    alone, together = grouped_and_alone("cuda")
    for a, b in zip(alone, together):
        assert (a.best_epoch_, a.n_epochs_) == (b.best_epoch_, b.n_epochs_)
        np.testing.assert_allclose(a.history_["val_loss"], b.history_["val_loss"], rtol=5e-3, atol=1e-5)
    assert len({a.n_epochs_ for a in alone}) > 1
