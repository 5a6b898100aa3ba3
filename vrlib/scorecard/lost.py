"""Krčo et al., *Lost in the Averages* (DPM 2025): its quantitative claims, their quotes and their rules.

The noise this run has: each RMSD comes with a 95 % bootstrap interval over the test datasets
(``rmsd_low``, ``rmsd_high``) and a *noise floor*, the RMSD between two runs of one game
(``floor``); each miss rate with its interval and the miss rate of two runs of one game, noise
alone (``miss_rate_noise`` and its interval). A miss rate counts as beyond the noise when its
interval clears the noise's. An RMSD counts as beyond its floor when ``rmsd − floor`` is above 0 by
more than Z of its standard errors (:func:`excess`): the floor is an estimate over the same records
and test datasets, not a constant, and shares run 0 of each game with the RMSD. Its se is the
bootstrap's (``excess_se``, which keeps the two's covariance) where the table has it, else an
approximation from normal theory (:func:`excess_se_approx`), checked against the bootstrap where
both can be computed (``scripts/lost_floor_se.py``). The paper's text at hand is its abstract and a summary of its results (in
German); the quotes are those words.

Each setting is counted once (:func:`settings`): a setting is what defines a game (dataset, generator,
ε, |D|), not the numbers a table shows. The tables share settings: |D| = 1,000 of Fig. 3 is the
Adult/Synthpop setting of the headline table, and Fig. 4's ε = ∞ is the headline's Adult/BayNet
setting, played on a prefix of the same records in the same games (notebook 06 takes it from the
cache); of a setting's rows, those over the most records are read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.scorecard.rules import (
    ABOUT,
    PAST_MARGIN,
    TOO_NOISY,
    Z,
    Claim,
    Outcome,
    ahead,
    family_note,
    family_z,
    equivalent,
    equivalent_interval,
    f,
    peek,
    record,
    replication_margin,
    span,
    step_against,
    too_noisy,
)

PAPER = "lost"

LOST_RMSD = ("lost_table_rmsd", "lost_fig3_rmsd", "lost_fig4_rmsd", "lost_census_rmsd")
LOST_MISS = ("lost_table_miss", "lost_fig3_miss", "lost_fig4_miss", "lost_census_miss")
NB = "06"
# The authors' package plays 100 + 100 evaluation games per record (the paper profile's n_games = 200).
PAPER_GAMES_PER_SIDE = 100


def auc_sd(auc: float, m: int = PAPER_GAMES_PER_SIDE, n: int = PAPER_GAMES_PER_SIDE) -> float:
    """The sd of an AUC estimated from ``m`` positive and ``n`` negative games (Hanley & McNeil 1982): the noise of
    one of the paper's risks at its value, fixed by its design, not by our run."""
    a = float(auc)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    return float(np.sqrt((a * (1 - a) + (m - 1) * (q1 - a * a) + (n - 1) * (q2 - a * a)) / (m * n)))


ADULT = "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator zeigen: ... "


def paper_value(quantity: str, t: float | None = None) -> dict:
    from vrlib.experiments.lost import paper_values

    p = paper_values()
    p = p[p.quantity == quantity]
    p = p[np.isclose(p.t, t)] if t is not None else p[p.t.isna()]
    return p.iloc[0].to_dict()


def _statement(quantity: str, t: float | None = None):
    return lambda: paper_value(quantity, t)["statement"]


def setting_name(row, table: str) -> str:
    if table.startswith("lost_fig3"):
        return f"Adult, Synthpop, |D| = {row.n_records:,}"
    if table.startswith("lost_fig4"):
        return "Adult, BayNet (ε = ∞)" if np.isinf(row.epsilon) else f"Adult, PrivBayes ε = {row.epsilon:g}"
    if table.startswith("lost_census"):
        return f"Census, {row.generator}"
    return f"Adult, {row.generator}"


def headline_size() -> int:
    """|D| of the settings whose tables do not name it (the headline table, Fig. 4's ε sweep, Census): the
    profiles' ``n_records``, one value for every profile the scorecard reads."""
    from vrlib.experiments.lost import settings_for

    return int(settings_for("paper")["n_records"])


def setting_key(row, table: str) -> tuple:
    """What defines a setting, whichever table shows it: ``(dataset, generator, ε, |D|)`` (ε None without DP)."""
    size = headline_size()
    if table.startswith("lost_fig3"):
        return ("adult", "synthpop", None, int(row.n_records))
    if table.startswith("lost_fig4"):
        inf = np.isinf(row.epsilon)
        return ("adult", "baynet" if inf else "privbayes", None if inf else float(row.epsilon), size)
    if table.startswith("lost_census"):
        return (str(row.dataset), str(row.generator).lower(), None, size)
    return ("adult", str(row.generator).lower(), None, size)


def _records(rows: list, table: str) -> float:
    """How many records a table's rows of one setting rest on: the targets (RMSD tables), else the high-risk
    records over every t (a superset of the records has at least as many above each t)."""
    if table in LOST_RMSD:
        return float(sum(getattr(r, "n_targets", 0) for r in rows))
    return float(sum(getattr(r, "n_high", 0) for r in rows))


def settings(t: dict, names, key_columns=(), keep=None) -> list[tuple[str, object]]:
    """``(setting, row)`` for the rows of the named tables, each setting once (by :func:`setting_key`; miss tables
    once per setting and t). Where two tables show one setting (|D| = 1,000 of Fig. 3 and the headline; Fig. 4's
    ε = ∞ and the headline's BayNet), the rows of the table over the most records are kept (the other's records
    are a prefix of them, scored in the same games); the order is that of first appearance.
    ``key_columns``: columns a table must have to be read; ``keep(setting, row)``: the rows the rule uses (all by
    default). A table counts as read (:func:`~vrlib.scorecard.rules.record`) only when a row of it is returned: one
    whose rows of every setting another table's replace, or ``keep`` drops, is not, so the row's size and commits
    are never those of a table none of whose numbers entered the verdict."""
    chosen: dict = {}  # setting key -> (table, its rows)
    order: list = []
    for name in names:
        df = peek(t, name)  # read only if one of its rows is kept, below
        if df is None or not set(key_columns) <= set(df.columns):
            continue
        by: dict = {}
        for r in df.itertuples():
            by.setdefault(setting_key(r, name), []).append(r)
        for key, rows in by.items():
            if key not in chosen:
                order.append(key)
                chosen[key] = (name, rows)
            elif _records(rows, name) > _records(chosen[key][1], chosen[key][0]):
                chosen[key] = (name, rows)
    out = [(chosen[k][0], setting_name(r, chosen[k][0]), r) for k in order for r in chosen[k][1]]
    out = [(name, s, r) for name, s, r in out if keep is None or keep(s, r)]
    record(t, {name for name, _, _ in out})
    return [(s, r) for _, s, r in out]


def _interval(row, name: str, z: float = Z):
    """A value's bootstrap interval from the table (95 %), each side scaled by ``z`` / Z (a family's wider one), and
    never excluding the value itself; the value alone without an interval."""
    low, high = getattr(row, f"{name}_low", np.nan), getattr(row, f"{name}_high", np.nan)
    value = getattr(row, name)
    if pd.isna(low) or pd.isna(high):
        return value, value
    low, high = min(low, value), max(high, value)
    scale = z / Z
    return value - scale * (value - low), value + scale * (high - value)


def _records_interval(row, name: str = "miss_rate", z: float = Z):
    """A share of the ``n_high`` high-risk records against another share or a stated one: the union of its bootstrap
    interval (estimation noise of each record's risk, the table's) and the Clopper–Pearson interval of the share
    among the ``n_high`` records (which records are high-risk is a sample too: 6 of 6 missed is consistent with a
    true rate of 0.8, though every bootstrap replicate gives 1.0), both at the two-sided level of ``z`` (95 % at Z;
    a family's :func:`~vrlib.scorecard.rules.family_z` gives the wider Bonferroni one). ``name``: ``miss_rate``, or
    ``miss_rate_noise`` (the share two runs of one game disagree on, over the same records)."""
    from scipy import stats

    low, high = _interval(row, name, z)
    n, value = int(row.n_high), getattr(row, name)
    if n < 1 or pd.isna(value):
        return low, high
    alpha = 0.05 if z == Z else 2 * float(stats.norm.sf(z))  # Z stands for 95 %, not 1.96's 94.9996 %
    k = int(round(value * n))
    cp_low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    cp_high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return min(low, cp_low), max(high, cp_high)


# No inflation: against the bootstrap's, the approximate se of RMSD − floor (excess_se_approx) was 1.01–1.68 times
# as large (median 1.30) over 162 record sets of two quick-profile Adult settings (Synthpop, BayNet; all 100 records
# and 20 random subsets each of 10, 25, 50 and 75), never smaller; the floor's alone 0.76–1.62 (below 1 only on 10
# records), with no drift over the number of records (scripts/lost_floor_se.py).
FLOOR_SE_INFLATION = 1.0


def floor_se_approx(floor: float, rmsd: float, rmsd_se: float, inflation: float = FLOOR_SE_INFLATION) -> float:
    """The noise floor's standard error without its bootstrap replicates, scaled from the RMSD's bootstrap se.

    Normal theory for a root mean square over ``n`` records of differences ``s_i + e_i`` (a signal ``s_i``, a noise
    ``e_i`` of variance σ², independent over records): with ``S`` the mean of ``s_i²`` and ``r² = S + σ²``,
    ``var(r²) ≈ (4σ²S + 2σ⁴) / n``, so ``se(r) ≈ √(4σ²S + 2σ⁴) / (2 r √n)``. The floor is such a root mean square
    without signal, ``se(floor) ≈ σ / √(2n)`` with ``σ = floor``. The records are not independent (they share test
    datasets), so ``n`` is not the records' count but the effective number the RMSD's bootstrap se reveals: solving
    the first for ``n`` (with ``σ = floor``, ``S = max(0, rmsd² − floor²)``) and putting it into the second gives
    ``se(floor) ≈ rmsd_se · rmsd / √(2S + floor²)``. The floor pools two games' differences (twice the count),
    which this leaves out: it tends to overstate the se (measured: 0.76–1.62 times the bootstrap's, below 1 only
    on 10 records; see :data:`FLOOR_SE_INFLATION`). ``floor / √(2n)`` with the records' count, the plain
    normal-theory value, drifts below the bootstrap's as ``n`` grows (the shared test datasets: its ratio to the
    bootstrap's fell from 1.14 on 10 records to 0.95 on 100 for Synthpop, 1.27 to 1.03 for BayNet, and the paper's
    tables have 100–1,000), see ``scripts/lost_floor_se.py``. ``inflation`` scales the result (:data:`FLOOR_SE_INFLATION`)."""
    if pd.isna(rmsd_se) or pd.isna(rmsd) or pd.isna(floor) or rmsd <= 0:
        return float("nan")  # no RMSD to scale from
    signal = max(0.0, rmsd**2 - floor**2)
    return float(inflation * rmsd_se * rmsd / np.sqrt(2 * signal + floor**2))


def excess_se_approx(*, floor: float, rmsd: float, rmsd_se: float, inflation: float = FLOOR_SE_INFLATION) -> float:
    """The se of ``rmsd − floor`` without replicates of the floor: ``hypot(rmsd_se, floor_se_approx)``.

    Keyword-only: three floats in :func:`floor_se_approx`'s order were easy to pass in another.

    The covariance term is left out. The two share run 0 of each game, and a replicate whose run-0 risks are
    noisier raises both, so they are positively correlated (the bootstrap's correlation was 0.03–0.58 in the
    measurements of ``scripts/lost_floor_se.py``, never negative) and ``var(rmsd − floor) = var rmsd + var floor − 2 cov`` is below
    the sum: leaving ``cov`` out overstates the se, an interval too wide, never too narrow on that sign."""
    return float(np.hypot(rmsd_se, floor_se_approx(floor, rmsd, rmsd_se, inflation)))


def _rmsd_se(row) -> float:
    """The RMSD's se as its interval shows it: ``(rmsd_high − rmsd) / Z`` (the high end is not cut at 0); NaN
    without an interval."""
    high = getattr(row, "rmsd_high", np.nan)
    return np.nan if pd.isna(high) else max(0.0, float(high - row.rmsd) / Z)


def _floor_se_of(row) -> float:
    """A row's approximate floor se (:func:`floor_se_approx`, from its RMSD's interval)."""
    return floor_se_approx(row.floor, row.rmsd, _rmsd_se(row))


def excess(row) -> tuple[float, float, str]:
    """``(rmsd − floor, its se, where the se comes from)``: the table's bootstrap ``excess_se`` (the covariance of
    the two kept), else :func:`excess_se_approx` from the row's RMSD, its interval and its floor."""
    d = float(row.rmsd - row.floor)
    boot = getattr(row, "excess_se", np.nan)
    if pd.notna(boot):
        return d, float(boot), "bootstrap se"
    rmsd_se = _rmsd_se(row)
    if pd.isna(rmsd_se):
        return d, np.nan, "no se: neither excess_se nor an RMSD interval in the table"
    se = excess_se_approx(floor=row.floor, rmsd=row.rmsd, rmsd_se=rmsd_se)
    return d, se, f"se ≈ hypot(RMSD se, floor se {f(_floor_se_of(row), 4)} scaled from it), no covariance term"


# The games rate records alike where the RMS of their gap beyond the noise, √(RMSD² − floor²), is shown below this:
# half the smallest RMSD the paper calls a significant error (§5: "RMSD-Bereich von 0,04 bis 0,11, was einen
# signifikanten Fehler ... darstellt"). Without it "the games differ" could not fail: RMSD − floor is below 0 beyond
# its noise only by chance, since two games that agree give an RMSD equal to the floor, not below it.
ALIKE_RMS = 0.02


def gap_rms_high(row, z: float = Z) -> float:
    """The upper end, at ``z`` se, of the RMS gap between the games beyond their noise: √(RMSD² − floor²) =
    √(d (d + 2 floor)) with ``d = rmsd − floor`` at the upper end of its interval (:func:`excess`) and the floor at
    the upper end of its own (its se scaled from the RMSD's, :func:`floor_se_approx`; the point value where the row
    has no RMSD interval); NaN where ``d``'s se is unknown."""
    d, se, _ = excess(row)
    if pd.isna(se) or se <= 0:
        return float("nan")
    high = d + z * se
    floor_se = _floor_se_of(row)
    floor = row.floor + (0.0 if pd.isna(floor_se) else z * floor_se)
    return float(np.sqrt(max(0.0, high * (high + 2 * floor))))


def above_floor(row, fail_z=None):
    """The RMSD beyond its noise floor: ``rmsd − floor`` above 0 by more than Z se (True); below it by more than
    ``fail_z`` se, or the games shown to rate records alike (:func:`gap_rms_high` at ``fail_z`` below
    :data:`ALIKE_RMS`) (False; ``fail_z`` is Z when not given, the :func:`family_z` of a claim about every setting);
    else None (the floor's own noise included, :func:`excess`)."""
    d, se, _ = excess(row)
    # the noise unknown (or an interval of zero width, which no finite run gives): never judged on the point values
    if pd.isna(se) or se <= 0:
        return None
    v = ahead(d, se, fail_z=fail_z)
    if v is None and gap_rms_high(row, Z if fail_z is None else fail_z) < ALIKE_RMS:
        return False
    return v


def excess_text(row) -> str:
    """``rmsd − floor`` with its interval and the basis of its se, and the gap's RMS beyond the noise at most, for a
    row's evidence."""
    d, se, basis = excess(row)
    if pd.isna(se):
        return f"RMSD − floor {f(d, 4)} ({basis})"
    return (f"RMSD − floor {f(d, 4)} [{f(d - Z * se, 4)}, {f(d + Z * se, 4)}] ({basis}); RMS gap beyond the noise "
            f"at most {f(gap_rms_high(row), 4)} (alike below {ALIKE_RMS:g})")  # fmt: skip


def beyond_noise(row, fail_z: float | None = None):
    """The miss rate beyond the miss rate of noise alone (two runs of one game), each a share of the same ``n_high``
    records with its 95 % :func:`_records_interval` (the bootstrap's ∪ the binomial one, so that a share of a few
    records is read as one): the difference above 0 by more than Z se (True), below 0 by more than ``fail_z`` se
    (False; Z when not given, the :func:`~vrlib.scorecard.rules.family_z` of a claim about every cell), else None.

    Each share's se is its interval's half-width on the side facing the other, over Z (the intervals are
    asymmetric near 0 and 1: 6 of 6 has none above, 0.46 below); the two are combined as independent, √(se₁² + se₂²).
    Asking the two intervals to be apart would add the half-widths instead, a test at about 2.8 se, not 1.96."""
    return share_above(row, "miss_rate", row, "miss_rate_noise", fail_z)


# A miss rate no more than this above the miss rate of noise alone, at the upper end of their difference's interval,
# is read as noise: the margin of a share the paper states without an interval (ABOUT).
ALIKE_SHARE = ABOUT


def noise_alike(row, z: float = Z) -> bool:
    """The miss rate shown to be no more than noise alone: its excess over ``miss_rate_noise`` at most
    :data:`ALIKE_SHARE` at the upper end of the difference's interval at ``z`` (the miss rate's high side, the
    noise's low side, as :func:`share_above` combines them); False where either share is missing."""
    x, y = row.miss_rate, row.miss_rate_noise
    if pd.isna(x) or pd.isna(y):
        return False
    (_, x_high), (y_low, _) = _records_interval(row, "miss_rate", z), _records_interval(row, "miss_rate_noise", z)
    return float(x - y) + float(np.hypot(x_high - x, y - y_low)) < ALIKE_SHARE


def share_above(a, a_name: str, b, b_name: str, fail_z: float | None = None):
    """Share ``a_name`` of row ``a`` above share ``b_name`` of row ``b``: their difference above 0 by more than Z se
    (True), below 0 by more than ``fail_z`` se (False; Z when not given), else None (also with either share
    missing). Each share's se is the half-width of its 95 % :func:`_records_interval` on the side facing the other,
    over Z; the two combined as independent."""
    x, y = getattr(a, a_name), getattr(b, b_name)
    if pd.isna(x) or pd.isna(y):
        return None
    (x_low, x_high), (y_low, y_high) = _records_interval(a, a_name), _records_interval(b, b_name)
    d = float(x - y)
    up = float(np.hypot(x - x_low, y_high - y)) / Z  # the se of an excess: x's low side, y's high side
    down = float(np.hypot(x_high - x, y - y_low)) / Z  # of a shortfall: the other two
    if up > 0 and d > Z * up:
        return True
    if down > 0 and d < -(Z if fail_z is None else fail_z) * down:
        return False
    return None


RMSD_KEY = ("rmsd", "floor")
# A value's interval across an end of the paper's range: not within the noise (the value may be far beyond its
# noise), but too wide to place inside or outside the range.
ACROSS_END = "interval across an end of the range"
MISS_KEY = ("t", "n_high", "n_high_traditional", "miss_rate")


def is_adult_synthpop(setting: str, row=None) -> bool:
    """A setting of the summary's "Experimente auf dem Adult-Datensatz und dem Synthpop-Generator": Adult with
    Synthpop (the headline table's Synthpop row and Fig. 3's sizes), not BayNet, PrivBayes or Census (a ``keep``
    of :func:`settings`)."""
    return setting.lower().startswith("adult, synthpop")


# How a stated range is read. The summary gives each range for "Experimente auf dem Adult-Datensatz und dem
# Synthpop-Generator" without saying which of them give its two ends; ours need not be the same set (the paper's
# sizes and thresholds are not all stated). What the range says of every setting it spans, whichever they are, is
# that the setting's value lies inside it: that is what is judged. Its ends are not matched to our smallest and
# largest value: with another set of settings they need not be the same, and a mismatch would say nothing of the games.
RANGE_READING = (
    "the range's ends are not matched to our smallest and largest values: the summary does not say which settings "
    "give 0.04 / 0.73 and 0.11 / 0.94, and a value inside the range is what it states of each of them"
)


def rmsd_in_range(t):
    """Per Adult/Synthpop setting (the summary's range is stated for those), the RMSD inside the paper's range —
    judged only where it is beyond its noise floor (:func:`above_floor`; an RMSD the noise alone gives says nothing
    about the games)."""
    rows = settings(t, LOST_RMSD, RMSD_KEY, keep=is_adult_synthpop)
    if not rows:
        return None
    p = paper_value("rmsd")
    out = Outcome(f"RMSD {span([r.rmsd for _, r in rows])} over {len(rows)} settings (noise floors "
                  f"{span([r.floor for _, r in rows])})")  # fmt: skip
    z = family_z(len(rows))  # every setting inside: one outside fails the claim, so "outside" at the family z
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    out.ours += note
    for name, r in rows:
        low, high = _interval(r, "rmsd")
        floor = above_floor(r)
        if floor is not True:
            out.check(None, f"{name}: RMSD {f(r.rmsd)} [{f(low)}, {f(high)}] not beyond its floor {f(r.floor)}: "
                      f"{excess_text(r)}")  # fmt: skip
            continue
        wl, wh = _interval(r, "rmsd", z)
        v = True if p["low"] <= low and high <= p["high"] else (False if wh < p["low"] or wl > p["high"] else None)
        out.check(v, f"{name}: RMSD {f(r.rmsd)} [{f(low)}, {f(high)}] against {span([p['low'], p['high']], 2)}",
                  ACROSS_END)  # fmt: skip
    return out


def rmsd_above_floor(t):
    rows = settings(t, LOST_RMSD, RMSD_KEY)
    if not rows:
        return None
    v = [above_floor(r, fail_z=family_z(len(rows))) for _, r in rows]  # every setting: below fails at the family z
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    out = Outcome(
        f"RMSD above its noise floor beyond the noise of both in {sum(x is True for x in v)} of {len(rows)} settings"
        f" ({_bases(r for _, r in rows)}){note}"
    )
    for (name, r), x in zip(rows, v):
        out.check(x, f"{name}: RMSD {f(r.rmsd)}, floor {f(r.floor)}, {excess_text(r)}{note}")
    return out


def _bases(rows) -> str:
    """Which se the rows' RMSD − floor rests on, in words."""
    rows = list(rows)
    boot = sum(pd.notna(getattr(r, "excess_se", np.nan)) for r in rows)
    if boot == len(rows):
        return "se of RMSD − floor from the bootstrap"
    approx = "the floor's se scaled from the RMSD's (normal theory), no covariance term"
    return approx if boot == 0 else f"{boot} with the bootstrap's se of RMSD − floor, the others {approx}"


def _miss_rows(t, t_value, names=LOST_MISS, setting=None):
    """The rows at threshold ``t_value`` with a miss rate (of the settings ``setting(name)`` keeps, all by default)."""

    def keep(name, r):
        return np.isclose(r.t, t_value) and pd.notna(r.miss_rate) and (setting is None or setting(name))

    return settings(t, names, MISS_KEY, keep=keep)


def _miss_text(rows, t_value):
    return (
        f"miss rate at t = {t_value:g}: {span([r.miss_rate for _, r in rows], 2)} over {len(rows)} settings "
        f"({sum(int(r.n_high) for _, r in rows)} high-risk records in all; two runs of one game, noise alone: "
        f"{span([r.miss_rate_noise for _, r in rows if pd.notna(r.miss_rate_noise)] or [np.nan], 2)})"
    )


def miss_in_range(t):
    """Per Adult/Synthpop setting at t = 0.8 (the summary's range is stated for those), the miss rate (its interval)
    inside the paper's range, where it is beyond noise alone."""
    rows = _miss_rows(t, 0.8, setting=is_adult_synthpop)
    if not rows:
        return None
    p = paper_value("miss_rate")
    z = family_z(len(rows))  # every setting inside: one outside fails the claim, so "outside" at the family z
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    out = Outcome(_miss_text(rows, 0.8) + note)
    for name, r in rows:
        low, high = _records_interval(r)
        noise = beyond_noise(r)
        if noise is not True:
            out.check(None, f"{name}: {f(r.miss_rate, 2)} [{f(low, 2)}, {f(high, 2)}] not beyond noise alone "
                      f"({f(r.miss_rate_noise, 2)}, {int(r.n_high)} records)")  # fmt: skip
            continue
        wl, wh = _records_interval(r, z=z)
        v = True if p["low"] <= low and high <= p["high"] else (False if wh < p["low"] or wl > p["high"] else None)
        out.check(v, f"{name}: {f(r.miss_rate, 2)} [{f(low, 2)}, {f(high, 2)}] against {span([p['low'], p['high']], 2)}",
                  ACROSS_END)  # fmt: skip
    return out


POINT_2DP = 0.005  # half a unit of a value printed to two decimals (0.62): the paper's own precision


def _up_to(t_value: float, quantity_t: float, names=LOST_MISS, setting=None):
    """An "up to x at t" claim: the largest miss rate beyond noise alone (over the settings) equivalent to x: its
    interval (:func:`_records_interval`: the bootstrap's and the records' binomial one) inside x ± ABOUT holds, wholly
    outside fails, else inconclusive. An interval merely covering x (a few records' wide one) is not a match.

    The margin is the shared one for a share stated without an interval (:data:`~vrlib.scorecard.rules.ABOUT`), not
    the half percent x is printed to: a share of the high-risk records of one |D| = 1,000 (at most 1,000 records;
    the paper's own 94 % rests on such a count) has a binomial 95 % interval of at least ± 0.015 at 0.94, so a
    margin of ± 0.005 could never be met, by the paper's run either, and the rule could never say "holds".
    ``setting``: the settings the paper states x for (a ``keep`` of :func:`settings`), all by default."""

    def rule(t):
        rows = _miss_rows(t, t_value, names, setting)
        if not rows:
            return None
        stated = paper_value("miss_rate", quantity_t)["high"]
        clear = [(n, r) for n, r in rows if beyond_noise(r) is True]
        out = Outcome(_miss_text(rows, t_value) + f"; beyond noise alone in {len(clear)}")
        if not clear:
            out.check(None, f"no setting's miss rate at t = {t_value:g} beyond noise alone")
            return out
        name, r = max(clear, key=lambda nr: nr[1].miss_rate)
        low, high = _records_interval(r)
        out.ours += f"; the largest: {name} {f(r.miss_rate, 2)} [{f(low, 2)}, {f(high, 2)}] of {int(r.n_high)} records"
        v = equivalent_interval(low - stated, high - stated, ABOUT)
        what = f"{name}: {f(r.miss_rate, 2)} [{f(low, 3)}, {f(high, 3)}] against {stated:g} ± {ABOUT:g}"
        if setting is not None:
            # "up to x" across the paper's datasets and models: a setting outside those it states x for whose miss
            # rate at t lies above x beyond noise alone and its records' noise (at the Bonferroni z of those settings,
            # any one of which would do) contradicts it
            rest = [(n, q) for n, q in _miss_rows(t, t_value, names, lambda n: not setting(n)) if beyond_noise(q)]
            z = family_z(max(len(rest), 1))
            above = [(n, q) for n, q in rest if _records_interval(q, z=z)[0] > stated]
            if above:
                n, q = max(above, key=lambda nq: nq[1].miss_rate)
                v = False
                what += f"; {n}: {f(q.miss_rate, 2)} of {int(q.n_high)} records, above {stated:g} beyond the noise"
        out.check(v, what, PAST_MARGIN)
        return out

    return rule


def miss_above_at_06(t):
    """Per setting at t = 0.6 ("in allen Einstellungen": each once), the miss rate above 20 % (its
    :func:`_records_interval`) and beyond noise alone (holds); below 20 % (fails), judged at the
    :func:`~vrlib.scorecard.rules.family_z` of the settings, as a claim about every one of them; else inconclusive."""
    rows = _miss_rows(t, 0.6)
    if not rows:
        return None
    bound = paper_value("miss_rate", 0.6)["low"]
    z = family_z(len(rows))
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    out = Outcome(_miss_text(rows, 0.6) + note)
    for name, r in rows:
        low, high = _records_interval(r)
        if _records_interval(r, z=z)[1] < bound:
            v = False
        elif low > bound:
            v = True if beyond_noise(r) is True else None  # above the bound: it holds if beyond noise alone too
        else:
            v = None
        out.check(v, f"{name}: {f(r.miss_rate, 2)} [{f(low, 2)}, {f(high, 2)}] of {int(r.n_high)} records, noise "
                  f"alone {f(r.miss_rate_noise, 2)}{note}")  # fmt: skip
    return out


def miss_beyond_noise(t):
    """Per setting and threshold with high-risk records (each once), the miss rate beyond noise alone
    (:func:`beyond_noise`: both shares read with their records' binomial noise); "for all thresholds": below noise
    alone fails only at the :func:`~vrlib.scorecard.rules.family_z` of the cells."""
    rows = settings(t, LOST_MISS, MISS_KEY, keep=lambda n, r: pd.notna(r.miss_rate))
    if not rows:
        return None
    z = family_z(len(rows))
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    v = [beyond_noise(r, fail_z=z) for _, r in rows]
    v = [False if x is None and noise_alike(r, z) else x for x, (_, r) in zip(v, rows)]
    out = Outcome(
        f"miss rate beyond noise alone in {sum(x is True for x in v)}, below it in {sum(x is False for x in v)}, "
        f"within it in {sum(x is None for x in v)} of {len(rows)} (setting, t) cells (each share with its records' "
        f"binomial interval){note}"
    )
    for (name, r), x in zip(rows, v):
        (lo, hi), (nlo, nhi) = _records_interval(r), _records_interval(r, "miss_rate_noise")
        out.check(x, f"{name}, t = {r.t:g}: {f(r.miss_rate, 2)} [{f(lo, 2)}, {f(hi, 2)}] of {int(r.n_high)} records,"
                  f" noise alone {f(r.miss_rate_noise, 2)} [{f(nlo, 2)}, {f(nhi, 2)}]{note}")  # fmt: skip
    return out


def miss_rises_with_t(t):
    """Per setting, the miss rate at the largest t with one above that at the smallest (:func:`share_above`).

    Each rate read with :func:`_records_interval` (the bootstrap's ∪ the binomial over the high-risk records), as for
    every other miss rate read as a proportion: at t = 0.9 a setting has 2–15 high-risk records, whose bootstrap
    interval alone (every replicate missing all 4 of 4) would call a rise that those few records cannot show."""
    by: dict = {}
    for name, r in settings(t, LOST_MISS, MISS_KEY, keep=lambda n, r: pd.notna(r.miss_rate)):
        by.setdefault(name, []).append(r)
    by = {k: sorted(v, key=lambda r: r.t) for k, v in by.items() if len(v) > 1}
    if not by:
        return None
    out = Outcome(
        "; ".join(f"{k}: {', '.join(f(r.miss_rate, 2) for r in v)} at t = {', '.join(f'{r.t:g}' for r in v)}" for k, v in by.items())
    )  # fmt: skip
    # "nimmt mit zunehmendem t zu", for every setting: per setting its two ends and each step between neighbouring
    # t's; a fall, of the ends or of a step, fails it only beyond the family z of all these comparisons
    m = sum(1 + len(v) - 1 for v in by.values())
    z = family_z(m)
    note = f" ({family_note(m)})" if family_note(m) else ""
    out.ours += note
    for k, v in by.items():
        (lo1, hi1), (lo2, hi2) = _records_interval(v[0]), _records_interval(v[-1])
        x = share_above(v[-1], "miss_rate", v[0], "miss_rate", fail_z=z)
        what = (f"{k}: [{f(lo1, 2)}, {f(hi1, 2)}] at t = {v[0].t:g}, [{f(lo2, 2)}, {f(hi2, 2)}] at t = {v[-1].t:g} "
                f"({int(v[-1].n_high)} record{'' if int(v[-1].n_high) == 1 else 's'})")  # fmt: skip
        # a step between neighbouring t's falling beyond the noise contradicts "increases with t" (between the ends)
        falls = [(a, b) for a, b in zip(v, v[1:]) if share_above(b, "miss_rate", a, "miss_rate", fail_z=z) is False]
        if falls:
            a, b = max(falls, key=lambda ab: ab[0].miss_rate - ab[1].miss_rate)
            x = False
            what += f"; falls from {f(a.miss_rate, 2)} at t = {a.t:g} to {f(b.miss_rate, 2)} at t = {b.t:g} beyond the noise"
        out.check(x, what + note)
    return out


def _sweep(t, table: str, key: str, columns=("rmsd", "floor")) -> list | None:
    df = t.get(table)
    if df is None or not {key, *columns} <= set(df.columns) or df[key].nunique() < 2:
        return None
    return list(df.sort_values(key).itertuples())


def _gap_trend(table: str, key: str, falls_with_key: bool):
    """The gap between the two games larger at one end of the sweep than at the other: the RMSD beyond its noise
    floor (:func:`excess`, RMSD − floor with its se, the floor's noise counted) at that end above that at the other
    by more than Z se of the difference (the two ends are separate games: independent). The raw RMSDs are not
    compared: each holds its setting's floor, the RMSD two runs of one game give, which differs between settings
    (a setting at or below its floor shows no gap, whatever its RMSD)."""

    def rule(t):
        rows = _sweep(t, table, key)
        if rows is None:
            return None
        big, small = (rows[0], rows[-1]) if falls_with_key else (rows[-1], rows[0])
        out = Outcome(
            "RMSD " + ", ".join(f"{f(r.rmsd)} at {setting_name(r, table)}" for r in rows)
            + "; noise floors " + ", ".join(f(r.floor) for r in rows)
        )  # fmt: skip
        (db, eb, _), (ds, es, _) = excess(big), excess(small)
        d, e = db - ds, float(np.hypot(eb, es))
        out.ours += (
            f"; RMSD − floor {f(db, 4)} at {setting_name(big, table)}, {f(ds, 4)} at {setting_name(small, table)}"
        )
        v = None if pd.isna(e) or e <= 0 else ahead(d, e)
        out.check(v, f"RMSD − floor at {setting_name(big, table)} − at {setting_name(small, table)} {f(d, 4)} (se "
                  f"{f(e, 4)}; {excess_text(big)} and {excess_text(small)})")  # fmt: skip
        return out

    return rule


def gap_at_largest_size(t):
    rows = [r for r in _sweep(t, "lost_fig3_rmsd", "n_records") or () if r.n_records >= 10_000]
    if not rows:
        return None
    out = Outcome("; ".join(f"{setting_name(r, 'lost_fig3')}: RMSD {f(r.rmsd)} [{f(_interval(r, 'rmsd')[0])}, "
                            f"{f(_interval(r, 'rmsd')[1])}], floor {f(r.floor)}, {excess_text(r)}"
                            for r in rows))  # fmt: skip
    note = f" ({family_note(len(rows))})" if family_note(len(rows)) else ""
    out.ours += note
    for r in rows:
        out.check(above_floor(r, fail_z=family_z(len(rows))), f"{setting_name(r, 'lost_fig3')}: {excess_text(r)}{note}")
    return out


def risk_to_chance(t):
    """Per game: the mean risk over the targets lower at the smallest ε than at the largest, and at the smallest
    within the noise of 0.5.

    The noise of a mean over n targets: one run's per-record sd is floor / √2 (the floor is the RMSD of two runs).
    The targets are scored in the same games (the same shadow and test datasets), so their errors are not
    independent, and the table has no interval of the mean that keeps them shared. Its se lies between floor / √(2n)
    (independent errors) and floor / √2 (one shared error); a check passes or fails only where both bounds agree:
    the fall is judged against the larger se. 0.5 is reached when the mean is equivalent to it: its 95 % interval
    inside 0.5 ± ABOUT (the paper prints "AUC 0,5" to one decimal) with both se (True), wholly outside it with both
    (False), else inconclusive."""
    games = {"traditional": "traditional", "model_seeded": "model-seeded"}
    rows = _sweep(
        t, "lost_fig4_rmsd", "epsilon", ["n_targets"] + [f"{k}_{g}" for g in games for k in ("mean", "floor")]
    )
    if rows is None:
        return None
    low, high = rows[0], rows[-1]
    at_low, at_high = setting_name(low, "lost_fig4"), setting_name(high, "lost_fig4")

    def se(r, g, shared=False):
        return getattr(r, f"floor_{g}") / np.sqrt(2 * (1 if shared else r.n_targets))

    out = Outcome(
        "; ".join(
            f"{name}: mean risk {f(getattr(low, f'mean_{g}'))} (se {f(se(low, g), 4)}–{f(se(low, g, True), 4)}) at "
            f"{at_low}, {f(getattr(high, f'mean_{g}'))} at {at_high}"
            for g, name in games.items()
        )
    )
    # one sentence: per game the fall between the ends, each step between neighbouring ε ("nimmt mit sinkendem ε
    # ab", along the sweep) and 0.5 reached; one against it fails the claim only beyond the family z of their number
    m = len(games) * (2 + len(rows) - 1)
    fail_z, note = family_z(m), f" ({family_note(m)})"
    for g, name in games.items():
        m_low, m_high = getattr(low, f"mean_{g}"), getattr(high, f"mean_{g}")
        d, e = m_high - m_low, float(np.hypot(se(low, g, True), se(high, g, True)))
        v, what = ahead(d, e, fail_z=fail_z), f"{name}: {f(m_high)} − {f(m_low)} between the ends (se up to {f(e, 4)})"
        means = [getattr(r, f"mean_{g}") for r in rows]
        if (step := step_against(means, [se(r, g, True) for r in rows], rising=True, fail_z=fail_z)) is not None:
            k, sd, sde = step
            v = False
            what += (f"; rises as ε decreases from {setting_name(rows[k + 1], 'lost_fig4')} to "
                     f"{setting_name(rows[k], 'lost_fig4')} by {f(-sd, 4)} (se up to {f(sde, 4)})")  # fmt: skip
        out.check(v, what + note)
        lo, hi = se(low, g), se(low, g, True)
        v_lo, v_hi = (equivalent(m_low - 0.5, s, ABOUT, fail_z=fail_z) for s in (lo, hi))
        v = v_lo if v_lo == v_hi else None
        # with one shared error the mean's interval alone reaches past the margin: 0.5 reached cannot be shown
        noisy = too_noisy(hi, ABOUT) if v is None and v_lo is not False else ""
        out.check(v, f"{name}: {f(m_low)} at {at_low} is {f(m_low - 0.5, 4)} from 0.5, against ± {ABOUT:g} (1.96 se: "
                  f"{f(Z * lo, 4)} with independent targets, {f(Z * hi, 4)} with one shared error)"
                  + (f"; with one shared error {noisy}" if noisy else "") + note,
                  TOO_NOISY if noisy else PAST_MARGIN)  # fmt: skip
    return out


def varies_least_sd(width: float, n: int) -> float:
    """The least sample sd (ddof = 1) of ``n`` values spanning ``width``: one at each end, the rest in the middle,
    ``width / √(2 (n − 1))``."""
    return float(max(width, 0.0) / np.sqrt(2 * (n - 1)))


def varies_too_little(between_sd: float, noise_sd: float, sd_need: float, n: int) -> float:
    """One-sided p of "the spread of the true risks over the ``n`` datasets is at least ``sd_need``", from the sd of
    one run over the datasets (``between_sd``, ddof = 1, n − 1 df) and the noise sd of one estimate (``noise_sd``, from
    two runs in each dataset: n df). The observed variance estimates the true spread's plus the noise's, so
    ``(between_sd² / noise_sd²) / (1 + sd_need² / noise_sd²)`` is F(n − 1, n) at the least spread allowed; a small p
    says the spread is smaller than that beyond the noise. (The noise variance in the ratio is the estimated one, an
    approximation of the test's reference point.)"""
    from scipy import stats

    ratio = (between_sd / noise_sd) ** 2 / (1 + (sd_need / noise_sd) ** 2)
    return float(stats.f.cdf(ratio, n - 1, n))


def one_record(t):
    """The record's model-seeded risk varies over datasets beyond estimation noise (F test); the worst case exceeds
    its traditional risk by about the paper's 0.2; its traditional risk is about the paper's 0.62; and its range spans
    about the paper's 0.5 to 0.8.

    Each "about" is an equivalence whose margin is the larger of the paper's printed precision and what two runs of
    the same estimate differ by (95 %: Z √(our noise sd² + the paper's); for the worst case − traditional, itself a
    difference of two estimates, each side's sd that of the difference). The paper's values are estimates from as many games as ours (notebook
    06's sizes: 200 per estimate, the authors' too), so they carry that noise; a margin below it (± 0.005 for
    "0,62") could never be met, by the paper's own run either, and the row could never say "holds". The paper's noise
    sd is that of an AUC from its 100 + 100 games at the paper's value (:func:`auc_sd`), not ours: a margin that grew
    with our noise would let a noisier run match more easily."""
    df = t["lost_fig5"]
    need = {"model_seeded_min", "model_seeded_max", "traditional", "between_datasets_sd", "noise_sd", "n_datasets"}
    if not need <= set(df.columns):
        return None
    from scipy import stats

    r = df.iloc[0]
    n = int(r.n_datasets)
    p_f = float(stats.f.sf((r.between_datasets_sd / r.noise_sd) ** 2, n - 1, n))
    pl, pt = paper_value("model_seeded_risk_over_15_datasets"), paper_value("traditional_risk_of_that_record")
    stated_under = pl["high"] - pt["high"]  # the paper: R_T underestimates the worst case by about 0.2
    under = r.model_seeded_max - r.traditional
    e = float(np.sqrt(2) * r.noise_sd)  # two estimates, each with the noise sd
    # The paper's values are as noisy as an AUC from its games at that value (auc_sd), not as ours: were their noise
    # ours, the margin would grow with our noise faster than our interval, and the noisier the run the more easily it
    # would match (|ours − paper| below 0.81 of our sd would do).
    sd_t, sd_high, sd_low = auc_sd(pt["high"]), auc_sd(pl["high"]), auc_sd(pl["low"])
    # what two runs differ by: of one estimate, of a difference of two
    two = replication_margin(e, float(np.hypot(sd_high, sd_t)))
    out = Outcome(
        f"model-seeded {f(r.model_seeded_min)}–{f(r.model_seeded_max)} over {n} datasets (sd {f(r.between_datasets_sd)}, "
        f"noise sd {f(r.noise_sd)}, F test p = {f(p_f)}); traditional {f(r.traditional)}; worst case − traditional "
        f"{f(under)} (the paper: {f(pl['high'])} − {f(pt['high'])})"
    )
    # two sentences, five comparisons: one against them fails the claim only beyond their family z (for the one-sided
    # F test of 'varies', at its one-sided level 0.025 / 5, as a z-test's fail side at family_z)
    m = 5
    fail_z, note = family_z(m), f" ({family_note(m)})"
    # "variiert von etwa 0,5 ... bis 0,8": a spread over the datasets beyond estimation noise (F test) and not smaller,
    # beyond the noise, than a range of about 0.5 to 0.8 needs (each end within ABOUT: at least 0.2 wide)
    sd_need = varies_least_sd(pl["high"] - pl["low"] - 2 * ABOUT, n)
    p_small = varies_too_little(r.between_datasets_sd, r.noise_sd, sd_need, n)
    if p_small < 0.025 / m:
        out.check(False, f"spread over datasets sd {f(r.between_datasets_sd)} (noise sd {f(r.noise_sd)}) below the "
                  f"least a range of about {f(pl['low'], 1)} to {f(pl['high'], 1)} gives (sd {f(sd_need)} over {n} "
                  f"datasets) beyond the noise (F test p = {f(p_small, 4)}, below {0.025 / m:g}){note}")  # fmt: skip
    else:
        out.check(True if p_f < 0.05 else None, f"spread over datasets not beyond estimation noise (F test p = "
                  f"{f(p_f)})")  # fmt: skip
    margin = max(ABOUT, two)  # "about 0.2", one decimal
    out.check(equivalent(under - stated_under, e, margin, fail_z=fail_z), f"worst case − traditional {f(under)} "
              f"against about {f(stated_under)} ± {f(margin)}{note}", PAST_MARGIN)  # fmt: skip
    margin = max(POINT_2DP, replication_margin(r.noise_sd, sd_t))  # "R_T = 0,62", two decimals
    out.check(equivalent(r.traditional - pt["high"], r.noise_sd, margin, fail_z=fail_z),
              f"traditional risk {f(r.traditional)} against {f(pt['high'])} ± {f(margin)}{note}", PAST_MARGIN)  # fmt: skip
    for end, ours, stated, sd in (("lowest", r.model_seeded_min, pl["low"], sd_low),
                                  ("highest", r.model_seeded_max, pl["high"], sd_high)):  # fmt: skip
        margin = max(ABOUT, replication_margin(r.noise_sd, sd))  # "etwa 0,5 ... bis 0,8", one decimal
        out.check(
            equivalent(ours - stated, r.noise_sd, margin, fail_z=fail_z),
            f"{end} model-seeded risk {f(ours)} against about {f(stated)} ± {f(margin)}{note}",
            PAST_MARGIN,
        )
    return out


S2 = "Figs. 1 and 2: each record's risk in the two games"
S3 = "Fig. 3: the size of D"
S4 = "Fig. 4: PrivBayes ε"
S5 = "Fig. 5: one record in many datasets"

CLAIMS: tuple[Claim, ...] = (
    Claim(PAPER, "abstract", "show across multiple datasets and models that the two privacy games indeed result in "
          "different risk scores, with up to 94% of high-risk records being overlooked by the traditional game",
          _statement("miss_rate", 0.8), LOST_MISS, _up_to(0.8, 0.8, setting=is_adult_synthpop),
          "per Adult/Synthpop setting (each once) at t = 0.8 (the summary states the 94 % for those: 'Experimente auf "
          "dem Adult-Datensatz und dem Synthpop-Generator zeigen: 94 % der Datensätze mit hohem Risiko ... "
          "(Schwellenwert t=0,8)'; BayNet, PrivBayes and Census rows are not read for it): the "
          "largest miss rate beyond noise alone has a 95 % interval (bootstrap ∪ binomial over the high-risk records) "
          f"inside 0.94 ± {ABOUT:g} (a share stated without an interval) (holds), wholly outside (fails), else "
          "inconclusive; and, the abstract's 'up to' being across its datasets and models, it fails where another "
          "setting's miss rate at t = 0.8 is above 0.94 beyond noise alone and its records' interval (at the "
          "Bonferroni z of those settings)", NB, S2,
          "lost_fig2"),
    Claim(PAPER, "§5 (summary)", ADULT + "RMSD-Bereich von 0,04 bis 0,11, was einen signifikanten Fehler in der mit AUC "
          "bewerteten Risiken darstellt", _statement("rmsd"), LOST_RMSD, rmsd_in_range,
          "per Adult/Synthpop setting (each once; the summary states the range for 'Experimente auf dem "
          "Adult-Datensatz und dem Synthpop-Generator', so BayNet, PrivBayes and Census rows are not read), the "
          "RMSD's interval inside the range (holds), wholly outside it at the Bonferroni z of the settings (fails), "
          "judged only where it is beyond its noise floor, RMSD − floor above 0 by more than 1.96 se of the difference "
          "(else inconclusive: our floors lie inside the range, so noise alone would pass it); " + RANGE_READING,
          NB, S2, "lost_fig2"),
    Claim(PAPER, "abstract", "the two privacy games indeed result in different risk scores",
          "the two games rate records differently (beyond estimation noise)", LOST_RMSD, rmsd_above_floor,
          "per setting (each once), the RMSD above its noise floor (two runs of one game): RMSD − floor above 0 by more than 1.96 se of the "
          "difference (holds); below 0 by as much, or the games shown to rate records alike: the RMS of their gap "
          f"beyond the noise, √(RMSD² − floor²), below {ALIKE_RMS:g} at the upper end of its interval (half the "
          "smallest RMSD the paper calls a significant error, 0.04) (fails, at the Bonferroni z of the settings); "
          "else inconclusive; the floor is an estimate too: the se is "
          "the bootstrap's (covariance kept) where the table has it, else hypot(RMSD se, the floor's se scaled from "
          "the RMSD's by normal theory)", NB, S2,
          "lost_fig2"),
    Claim(PAPER, "§5 (summary)", ADULT + "Miss Rate-Bereich von 0,73 bis 0,94, was darauf hindeutet, dass die "
          "traditionelle Einstellung kontinuierlich Datensätze mit hohem Risiko falsch identifiziert",
          _statement("miss_rate"), LOST_MISS, miss_in_range,
          "per Adult/Synthpop setting (each once; the summary states the range for those) at t = 0.8, the miss rate's "
          "interval (bootstrap ∪ binomial over the high-risk records) inside the range (holds), wholly outside it at "
          "the Bonferroni z of the settings (fails), judged only where it is beyond noise alone (else inconclusive); "
          + RANGE_READING, NB, S3, "lost_fig3"),
    Claim(PAPER, "§5 (summary)", "Bei t=0,6 übersteigt die Miss Rate in allen Einstellungen 20 %",
          _statement("miss_rate", 0.6), LOST_MISS, miss_above_at_06,
          "per setting (each once) at t = 0.6, the miss rate's interval (bootstrap ∪ binomial over the high-risk records) above 20 % and beyond "
          "noise alone (holds), below 20 % (fails, only at the Bonferroni z of the settings: 'in allen Einstellungen'), "
          "else inconclusive", NB, S4,
          "lost_fig4"),
    Claim(PAPER, "§5 (summary)", "Bei t=0,9 erreicht die Miss Rate bis zu 80 %", _statement("miss_rate", 0.9),
          LOST_MISS, _up_to(0.9, 0.9),
          "at t = 0.9, the largest miss rate beyond noise alone (over the settings, each once) has an interval"
          f" (bootstrap ∪ binomial over the high-risk records) inside 0.80 ± {ABOUT:g} (a share stated without an "
          "interval) (holds), "
          "wholly outside (fails), else inconclusive; with none beyond noise alone, inconclusive", NB, S4, "lost_fig4"),
    Claim(PAPER, "§5 (summary)", "Für alle Schwellenwerte für hohes Risiko ist die Miss Rate signifikant",
          "for every threshold the miss rate is significant", LOST_MISS, miss_beyond_noise,
          "per setting and t (each once, where some record is above t), the miss rate above that of two runs of one "
          "game (noise alone) beyond 1.96 se of the difference, each a share of the same high-risk records with its "
          "se from its interval (bootstrap ∪ binomial over those records, the side facing the other) (holds); below "
          f"it, or at most {ALIKE_SHARE:g} above it at the upper end of the difference's interval (no more than noise "
          "alone, within the margin of a share stated without an interval) (fails, only at the Bonferroni z of the "
          "cells: 'für alle'); else inconclusive", NB, S2, "lost_fig2"),
    Claim(PAPER, "§4 (Props. 1–2)", "|α̂^MS_ϕ - α_ϕ| ≤ √(log(2/ρ)/(2N)) ... |α̂^T_ϕ - E_{D̄∼D^n}α_{ϕ,D̄}| ≤ √(log(2/ρ)/(2N))",
          "Hoeffding bounds on the games' error-rate estimates",
          unjudged="a theorem about an error rate; the tables hold AUCs, to which it does not apply as stated "
          "(notebook 06 uses it only to size the games)"),
    Claim(PAPER, "§5 (summary)", "Die Miss Rate nimmt mit zunehmendem Schwellenwert t zu",
          _statement("miss_rate_trend_t"), LOST_MISS, miss_rises_with_t,
          "per setting (each once), the miss rate at its largest t above that at its smallest beyond 1.96 se of the "
          "difference, each rate's se from its interval (bootstrap ∪ binomial over the high-risk records, the side "
          "facing the other), and no step between neighbouring t's falling beyond the noise (holds); the ends, or a "
          "step, falling beyond the noise, at the Bonferroni z of all these comparisons (fails: 'nimmt mit "
          "zunehmendem t zu' at every step, not only between the ends); else inconclusive",
          NB, S2, "lost_fig2"),
    Claim(PAPER, "abstract; §5 (Fig. 3)", "records in smaller datasets ... tend to have a larger gap between risk "
          "estimates", _statement("rmsd_trend_size"), ("lost_fig3_rmsd",),
          _gap_trend("lost_fig3_rmsd", "n_records", falls_with_key=True),
          "the RMSD beyond its noise floor (RMSD − floor, the floor's noise in its se) at the smallest |D| above that "
          "at the largest, beyond 1.96 se of the difference; the se is over the records and test games of one draw "
          "of D and its shadow datasets per size: the spread between such draws is not measured", NB, S3,
          "lost_fig3"),
    Claim(PAPER, "§5 (summary, Fig. 3)", "Auch bei |D|=10.000 großen Datensätzen bleibt der RMSD signifikant",
          _statement("rmsd_at_10000"), ("lost_fig3_rmsd",), gap_at_largest_size,
          "at |D| ≥ 10,000, RMSD − the noise floor of that size above 0 by more than 1.96 se of the difference (the "
          "floor's noise included) (holds); below 0 by as much, or the RMS of the gap beyond the noise, "
          f"√(RMSD² − floor²), below {ALIKE_RMS:g} at the upper end of its interval (fails); else inconclusive",
          NB, S3, "lost_fig3"),
    Claim(PAPER, "§5 (summary, Fig. 4)", "Die MIA-Leistung nimmt mit sinkendem ε ab und konvergiert zur "
          "Zufallsbaseline (AUC 0,5)", _statement("risk_to_chance"), ("lost_fig4_rmsd",), risk_to_chance,
          "per game, the mean risk at the largest ε above that at the smallest beyond the noise, and at the "
          f"smallest equivalent to 0.5: its 95 % interval inside 0.5 ± {ABOUT:g} ('AUC 0,5' printed to one decimal); "
          "the targets share their games, so the se of their mean lies between floor / √(2n) (independent) and "
          "floor / √2 (one shared error): the fall judged on the larger, 0.5 reached when inside the margin with both "
          "(holds), missed when wholly outside with both (fails), else inconclusive; a step between neighbouring ε "
          "where the mean risk rises as ε decreases beyond the larger noise fails the fall ('nimmt mit sinkendem ε "
          "ab', along the sweep); the other way fails only at the Bonferroni z of the row's comparisons", NB, S4, "lost_fig4"),
    # The abstract's words; the summary says it as "Mit Schätzungen, die sich um 0,5 konzentrieren, nimmt auch der
    # Unterschied zwischen den beiden Schätzungen ab".
    Claim(PAPER, "abstract; §5 (summary, Fig. 4)", "models not protected by strong differential privacy guarantees "
          "tend to have a larger gap between risk estimates", _statement("rmsd_trend_epsilon"), ("lost_fig4_rmsd",),
          _gap_trend("lost_fig4_rmsd", "epsilon", falls_with_key=False),
          "the RMSD beyond its noise floor (RMSD − floor, the floor's noise in its se) at the largest ε above that at "
          "the smallest, beyond 1.96 se of the difference", NB, S4, "lost_fig4"),
    Claim(PAPER, "§5 (summary, Fig. 5)", "Das modellgestützte Risiko R_MS variiert von etwa 0,5 (Zufallsrate) bis 0,8 "
          "(hohes Risiko). Das traditionelle Risiko R_T = 0,62, unterschätzt das DPD-Risiko im schlimmsten Fall um 0,2",
          lambda: f"one record over 15 datasets: model-seeded {paper_value('model_seeded_risk_over_15_datasets')['statement']}"
          f", traditional {paper_value('traditional_risk_of_that_record')['statement']}", ("lost_fig5",), one_record,
          f"the spread over datasets beyond estimation noise (F test, 5 %) (holds), smaller beyond the noise than a "
          f"range of about 0.5 to 0.8 needs (each end within {ABOUT:g}: 0.2 wide at least, an sd of 0.038 over 15 "
          f"datasets; one-sided F test) (fails), else inconclusive; worst case − traditional, the traditional "
          f"risk (R_T = 0.62) and each end of the range each equivalent to the paper's: ours ± 1.96 noise sd inside "
          f"± the larger of the printed precision ({ABOUT:g} for 0.2, 0.5, 0.8; {POINT_2DP:g} for 0.62) and what two "
          "runs of the same estimate differ by (1.96 √(our noise sd² + the paper's); for the difference, each side's "
          "sd that of a difference of two), the paper's values "
          "coming from as many games as ours (their noise sd that of an AUC from the paper's 100 + 100 games at its "
          "value, Hanley & McNeil, not ours) (holds), wholly outside (fails), else inconclusive; every 'fails' at the "
          "Bonferroni level of the five comparisons", NB, S5, "lost_fig5"),
)  # fmt: skip
