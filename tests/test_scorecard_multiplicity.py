"""A claim about every one of many comparisons ("DOMIAS outperforms every baseline at every setting") must not fail
from noise alone: its "below one" side is judged at the Bonferroni z of the family (:func:`family_z`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vrlib.scorecard import CLAIMS
from vrlib.scorecard.domias import BASELINES, CONSISTENTLY
from vrlib.scorecard.rules import Z, verdict

N_SEEDS = 8
STD = 0.02  # population std over the seeds: se of one mean STD / √7
SE = STD / np.sqrt(N_SEEDS - 1)
SE_DIFF = float(np.hypot(SE, SE))  # se of DOMIAS − one baseline
ATTACKS = ("domias_flow", *BASELINES)  # DOMIAS and six baselines
N_MEM = (30, 50, 100, 200, 500, 1000)
EPOCHS = (100, 300, 1000, 1500, 2500, 3000)  # six settings each: 6 × 12 = 72 comparisons


def _rule():
    (claim,) = [c for c in CLAIMS if c.paper == "domias" and c.quote == CONSISTENTLY]
    return claim.rule


def _tables(means: dict) -> dict[str, pd.DataFrame]:
    """Figs. 3a and 3b from ``means[(key, x, attack)]``, every mean with the same std over ``N_SEEDS`` seeds."""
    out = {}
    for table, key, xs in (("domias_fig3a", "n_mem", N_MEM), ("domias_fig3b", "epochs", EPOCHS)):
        out[table] = pd.DataFrame(
            [
                {key: x, "attack": a, "auc_mean": means[(key, x, a)], "auc_std": STD, "n_seeds": N_SEEDS}
                for x in xs
                for a in ATTACKS
            ]
        )
    return out


def _keys():
    return [(k, x, a) for k, xs in (("n_mem", N_MEM), ("epochs", EPOCHS)) for x in xs for a in ATTACKS]


def _base(k) -> float:
    """A level per setting, the same for every attack: no two settings' values repeat (the rule counts a setting
    of Fig. 3b with Fig. 3a's values once, as the same runs)."""
    key, x, _ = k
    return 0.6 + 0.001 * (N_MEM + EPOCHS).index(x) + (0.0005 if key == "epochs" else 0.0)


def _verdict(means: dict) -> str:
    return verdict(_rule()(_tables(means)).checks)


def test_family_z_against_scipy():
    from vrlib.scorecard.rules import family_note, family_z

    for m in (1, 2, 6, 12, 72, 1000):
        assert family_z(m) == pytest.approx(stats.norm.ppf(1 - 0.025 / m), rel=1e-12)
    assert family_z(1) == pytest.approx(Z, abs=1e-3)
    assert round(family_z(72), 2) == 3.39  # the threshold quoted on the scorecard for Figs. 3a and 3b
    assert family_note(1) == ""
    assert family_note(72) == "fails only beyond 3.39 se, Bonferroni over 72 comparisons"
    with pytest.raises(ValueError, match="at least one"):
        family_z(0)


def test_against_each_fails_only_beyond_the_family_z():
    from vrlib.scorecard.rules import against_each, family_z

    z = family_z(72)
    behind = [("a", -2.5, 1.0), ("b", 5.0, 1.0)]  # beyond 1.96 se, not beyond 3.39
    assert against_each(behind)[0] is False
    assert against_each(behind, fail_z=z)[0] is None
    assert against_each([("a", -3.5, 1.0), ("b", 5.0, 1.0)], fail_z=z)[:2] == (False, "a")
    assert against_each([("a", 2.5, 1.0), ("b", 5.0, 1.0)], fail_z=z)[0] is True  # ahead stays at Z


def test_no_signal_rarely_fails():
    """All 7 attacks equal in truth at all 12 settings, each mean drawn at its se: a spurious "does not hold" in at
    most ~5 % of 400 replicates (Bonferroni: at most 2.5 % in expectation; measured 6 of 400, 1.5 %). Run against
    the rule before the family z (each comparison's fail side at 1.96), the same 400 replicates gave "does not hold"
    in 286 (71.5 %; less than 1 − 0.975^72 = 84 % because the 6 comparisons of a setting share DOMIAS's mean)."""
    rng = np.random.default_rng(39)
    keys = _keys()
    base = np.array([_base(k) for k in keys])
    verdicts = [_verdict(dict(zip(keys, base + SE * rng.standard_normal(len(keys))))) for _ in range(400)]
    rate = np.mean([v == "does not hold" for v in verdicts])
    assert rate <= 0.05, rate


def test_one_comparison_far_below_fails():
    """Equal everywhere but one baseline 8 se of a difference above DOMIAS at one setting: "does not hold"."""
    means = {k: _base(k) for k in _keys()}
    means[("epochs", 1000, "mc")] += 8 * SE_DIFF
    out = _rule()(_tables(means))
    assert verdict(out.checks) == "does not hold"
    assert "fails: epochs = 1000: DOMIAS (BNAF) − MC" in out.why()
    assert "Bonferroni over 72 comparisons" in out.why()


def test_one_comparison_between_the_two_thresholds_is_inconclusive():
    """One baseline 2.5 se above DOMIAS (beyond 1.96, within 3.39), the rest tied: inconclusive, not "does not hold"
    (the rule before the family z said "does not hold")."""
    means = {k: _base(k) for k in _keys()}
    means[("n_mem", 100, "logan_0")] += 2.5 * SE_DIFF
    assert _verdict(means) == "inconclusive"


def test_every_comparison_ahead_still_holds():
    """DOMIAS 2.5 se of a difference above every baseline at every setting: holds (the ahead side stays at 1.96)."""
    means = {k: _base(k) + (2.5 * SE_DIFF if k[2] == "domias_flow" else 0.0) for k in _keys()}
    assert _verdict(means) == "holds"


def _readings(gaps_in_se: list[float]) -> dict[str, pd.DataFrame]:
    """achilles' log-likelihood readings: one generator, distance and len(gaps_in_se) readings, each reading's gap
    to distance ``gap × se`` of their difference (every std 0.06 over 10 targets)."""
    std, n = 0.06, 10
    se = float(np.hypot(std / 3, std / 3))  # se_mean: std / √(n − 1)
    rows = [{"generator": "synthpop", "setting": "distance", "auc_mean": 0.8, "auc_std": std, "n_targets": n,
             "gap_to_distance": np.nan, "paper_gap": 0.062}]  # fmt: skip
    for i, g in enumerate(gaps_in_se):
        rows.append({"generator": "synthpop", "setting": f"reading {i}", "auc_mean": 0.8 - g * se, "auc_std": std,
                     "n_targets": n, "gap_to_distance": g * se, "paper_gap": 0.062})  # fmt: skip
    return {"achilles_loglik_readings": pd.DataFrame(rows)}


@pytest.mark.parametrize(
    "gaps, expected",
    [
        ([-2.5] + [0.0] * 13, "inconclusive"),  # beyond 1.96, within 2.91 (14 pairs): "does not hold" before
        ([-4.0] + [0.0] * 13, "does not hold"),  # beyond 2.91
        ([2.5] * 14, "holds"),  # every reading behind distance at 1.96
        ([-2.5], "does not hold"),  # one reading: its z is 1.96
    ],
)
def test_loglik_readings_family(gaps, expected):
    from vrlib.scorecard.achilles import loglik_below_distance

    out = loglik_below_distance(_readings(gaps))
    assert verdict(out.checks) == expected
    if len(gaps) == 14:
        assert "Bonferroni over 14 comparisons" in out.ours


def _fig5(logan_d1_excess_in_se: float) -> dict[str, pd.DataFrame]:
    """DOMIAS Fig. 5 with two groups, every attack as accurate on the group as outside it, except LOGAN D1 on the
    first group: its excess (group − rest) ``logan_d1_excess_in_se`` se of that difference."""
    rows = []
    for sg in ("race=A", "race=B"):
        for a in ("domias_flow", "gan_leaks_cal", "logan_0", "logan_d1", "logan_d1_published", "mc"):
            for g in ("minority", "majority"):
                up = g == "minority" and sg == "race=A" and a == "logan_d1"
                rows.append({"subgroup": sg, "group": g, "attack": a, "n_seeds": N_SEEDS, "accuracy_std": STD,
                             "accuracy_mean": 0.5 + (logan_d1_excess_in_se * SE_DIFF if up else 0.0)})  # fmt: skip
    return {"domias_fig5": pd.DataFrame(rows)}


@pytest.mark.parametrize("excess, expected", [(2.2, "inconclusive"), (4.0, "does not hold")])
def test_fig5_caption_family(excess, expected):
    """ "Except for GAN-leaks CAL, baselines fail to capture the excess": per group GAN-Leaks CAL's excess and the 4
    other baselines', × 2 groups = 10 comparisons, one of them capturing the excess fails the caption only beyond
    2.81 se (2.2 se said "does not hold" before)."""
    from vrlib.scorecard.domias import only_calibrated_captures_the_excess

    out = only_calibrated_captures_the_excess(_fig5(excess))
    assert verdict(out.checks) == expected
    assert "Bonferroni over 10 comparisons" in out.why(shown=10)


def _lost_miss_no_signal(rng, p_miss, p_noise):
    """lost's committed miss tables with each cell's high-risk records kept (``n_high``) and both shares drawn anew:
    the miss rate from Bin(n_high, ``p_miss``), noise alone from Bin(n_high, ``p_noise``), each with a bootstrap
    interval of its binomial 95 % normal width (the records' noise: what the table's bootstrap shows on many)."""
    from test_scorecard_rules import MISS, committed

    out = {}
    for name in MISS:
        df = committed(name).copy()
        has = df.miss_rate.notna() & (df.n_high > 0)
        n = df.loc[has, "n_high"].astype(int).to_numpy()
        for col, p in (("miss_rate", p_miss), ("miss_rate_noise", p_noise)):
            x = rng.binomial(n, p) / n
            half = Z * np.sqrt(x * (1 - x) / n)
            df.loc[has, col], df.loc[has, f"{col}_low"], df.loc[has, f"{col}_high"] = x, x - half, x + half
        out[name] = df
    return out


def _lost_rule(start: str):
    (claim,) = [c for c in CLAIMS if c.paper == "lost" and c.quote.startswith(start)]
    return claim.rule


@pytest.mark.parametrize(
    "start, p_miss, p_noise",
    [
        # "for every threshold the miss rate is significant": the traditional game misses 5 points more than a rerun
        # misses, the edge of its fail side (a miss rate shown within 0.05 of noise alone is noise, ALIKE_SHARE)
        ("Für alle Schwellenwerte", 0.35, 0.3),
        # "at t = 0.6 above 20 % in every setting": every setting's true miss rate exactly 20 %, the claim's edge
        ("Bei t=0,6", 0.2, 0.05),
    ],
)
def test_lost_every_cell_claims_rarely_fail_on_no_signal(start, p_miss, p_noise):
    """At the edge of each claim's fail side, on the committed records' counts (1 to 1,000 high-risk records per
    cell): some check "fails" (the claim's opposite beyond the noise somewhere) in at most ~5 % of 300 replicates;
    Bonferroni over the cells keeps it at most 2.5 % in expectation. Measured on these 300: 1 and 7 (2.3 %). The
    rules before (bootstrap intervals alone, the fail side at 1.96) failed 183 (61 %) and 43 (14 %) of 300 replicates
    without signal (0.3 against 0.3 for the first, whose fail side was then a miss rate below noise alone; it now
    fails there in 64 of 300, 21 %, rightly: its claim is false)."""
    rng = np.random.default_rng(39)
    rule = _lost_rule(start)
    fails = [any(c is False for c in rule(_lost_miss_no_signal(rng, p_miss, p_noise)).checks) for _ in range(300)]
    assert np.mean(fails) <= 0.05, np.mean(fails)


def test_lost_significant_miss_rate_needs_more_than_a_few_records():
    """6 of 6 high-risk records missed against noise alone 3 of 6: the bootstrap's intervals ([1, 1] against
    [0.2, 0.8]) are apart, but 6 records cannot tell 1.0 from 0.5 (Clopper–Pearson [0.54, 1] against [0.12, 0.88]:
    a difference of 0.5 against an se of √(0.46² + 0.38²) / 1.96 = 0.30): inconclusive. The same shares over 600
    records: beyond the noise (holds)."""
    from types import SimpleNamespace

    from vrlib.scorecard.lost import beyond_noise

    def row(n):
        return SimpleNamespace(miss_rate=1.0, miss_rate_low=1.0, miss_rate_high=1.0, miss_rate_noise=0.5,
                               miss_rate_noise_low=0.2, miss_rate_noise_high=0.8, n_high=n)  # fmt: skip

    assert beyond_noise(row(6)) is None
    assert beyond_noise(row(600)) is True
    below = SimpleNamespace(miss_rate=0.1, miss_rate_low=0.08, miss_rate_high=0.12, miss_rate_noise=0.5,
                            miss_rate_noise_low=0.45, miss_rate_noise_high=0.55, n_high=600)  # fmt: skip
    assert beyond_noise(below) is False


def test_lost_beyond_noise_agrees_with_fishers_exact_test_on_the_committed_cells():
    """On every committed (setting, t) cell, the miss rate beyond noise alone (the two shares' se from their
    bootstrap ∪ binomial intervals) against an independent computation, Fisher's exact test of the two counts
    (one-sided, as unpaired): wherever ours says beyond, Fisher's p is below 0.025; wherever Fisher's p is above 0.05,
    ours does not say beyond (ours is the more cautious between: it carries the bootstrap's noise too)."""
    from test_scorecard_rules import MISS, committed

    from vrlib.scorecard.lost import LOST_MISS, MISS_KEY, beyond_noise, settings

    tables = {n: committed(n) for n in MISS}
    rows = settings(tables, LOST_MISS, MISS_KEY, keep=lambda n, r: pd.notna(r.miss_rate))
    assert len(rows) == 27
    for name, r in rows:
        n = int(r.n_high)
        k1, k2 = round(r.miss_rate * n), round(r.miss_rate_noise * n)
        p = stats.fisher_exact([[k1, n - k1], [k2, n - k2]], alternative="greater").pvalue
        ours = beyond_noise(r)
        assert ours is not False, (name, r.t)
        if ours is True:
            assert p < 0.025, (name, r.t, k1, k2, n, p)
        if p > 0.05:
            assert ours is None, (name, r.t, k1, k2, n, p)


@pytest.mark.parametrize("table", ["achilles_table2", "achilles_table3"])
def test_more_or_equivalently_no_signal_rarely_fails(table):
    """ "Consistently ... more or equivalently at-risk": every method equal in truth (distance as at-risk as each
    other method: the claim is true), each cell's mean drawn at its se (the committed stds over 10 targets): some
    check fails (below the margin beyond the family z) in at most ~2.5 % of 300 replicates (measured: 1 of 300 on
    each table)."""
    from test_scorecard_rules import committed

    (claim,) = [c for c in CLAIMS if c.tables == (table,) and c.quote.startswith("Importantly")]
    base = committed(table).copy()
    se = base.auc_std / np.sqrt(base.n_targets - 1)
    rng = np.random.default_rng(3)
    fails = 0
    for _ in range(300):
        df = base.copy()
        df["auc_mean"] = 0.7 + se * rng.standard_normal(len(df))
        fails += any(c is False for c in claim.rule({table: df}).checks)
    assert fails / 300 <= 0.025, fails
