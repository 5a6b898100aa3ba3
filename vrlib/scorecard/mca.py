"""Hu et al., *TableGAN-MCA* (CCS 2021): its quantitative claims, their quotes and their rules.

The noise: Table 3's shares are counts of the training data (no sampling noise: the split is the
paper's 70/30 of the 45,222 complete Adult records, so only the split's randomness remains, within
a hundredth of a percent); Fig. 3's shares are counts over one release of ~31,655 records, whose
se (1.8 p.p. over the 2,394 records released more than 3 times, copies of 407 distinct values, each value one
cluster; 0.2 p.p. over the 24,557 unique ones; from ``mca_fig3``'s counts) is inside the "approximately" the
text states. The
spread between two trainings of the generator, which a release of the paper's WGAN-GP also carries,
is not measured (one release per generator): the tolerance is the text's "approximately", not a noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.scorecard.rules import (
    ABOUT,
    PAST_MARGIN,
    POINT,
    Z,
    Claim,
    Outcome,
    equivalent,
    f,
    family_note,
    family_z,
    pct,
    peek,
    record,
)

PAPER = "mca"
NB = "07"
DATA = "the Lawschool and Compas data are not in this companion's data folder; only Adult is reproduced"


def table3(t):
    df = t["mca_table3"]
    if not {"statistic", "ours", "paper"} <= set(df.columns):
        return None
    d = df.set_index("statistic")
    rows = [s for s in ("Pr[#x = 1]", "Pr[#x <= 3]") if s in d.index]
    if not rows:
        return None
    counts = [s for s in ("training records", "test records") if s in d.index]
    out = Outcome(
        ", ".join(f"{s} {pct(d.at[s, 'ours'], 2)}" for s in rows)
        + "".join(f"; {s} {d.at[s, 'ours']:,.0f}" for s in counts)
    )
    for s in rows:
        diff = d.at[s, "ours"] - d.at[s, "paper"]
        out.check(equivalent(diff, 0.0, POINT), f"{s} {100 * diff:+.2f} points")
    for s in counts:
        ours, paper = d.at[s, "ours"], d.at[s, "paper"]
        same = None if pd.isna(ours) or pd.isna(paper) else bool(ours == paper)  # a count not recorded is not a miss
        out.check(same, f"{s} {d.at[s, 'ours']:,.0f} (paper {d.at[s, 'paper']:,.0f})")
    return out


def _statement_table3() -> str:
    from vrlib.experiments.mca import PAPER as P

    return (
        f"Adult pre-processed, {P['n_train']:,} training records: {pct(P['unique_share'], 2)} unique, "
        f"{pct(P['at_most_3_share'], 2)} with frequency ≤ 3"
    )


def _wgan_gp(t):
    """The WGAN-GP release's row of ``mca_collisions`` (the one release the paper reports numbers for), or None."""
    df = t["mca_collisions"]
    if "WGAN-GP" not in set(df.get("generator", [])):
        return None
    return df.set_index("generator").loc["WGAN-GP"]


def _share_se(t, member_share: float, frequencies) -> tuple[float, int, int]:
    """se of the members' share among the WGAN-GP release's records whose frequency is in ``frequencies`` (a
    predicate), with how many records and distinct values it is over, from ``mca_fig3``'s counts.

    The records are not independent: a value released f times is f identical records, all members or all not, so
    each distinct value is one cluster of weight f and the se is that of a ratio over clusters,
    √(Σ f² (y − p)²) / Σ f (y = 1 for a member value); for unique records (f = 1) it is the binomial one. (NaN, 0, 0)
    without the table: a share whose counts are unknown has no known noise, and
    :func:`~vrlib.scorecard.rules.equivalent` then never calls a match."""
    df = peek(t, "mca_fig3")  # read only when its counts give the se, below
    if df is None or not {"frequency", "members", "non_members", "generator"} <= set(df.columns):
        return float("nan"), 0, 0
    rows = df[(df.generator == "WGAN-GP") & frequencies(df.frequency)]
    n = float(rows.members.sum() + rows.non_members.sum())
    if not n:
        return float("nan"), 0, 0
    record(t, ["mca_fig3"])
    values_in, values_out = rows.members / rows.frequency, rows.non_members / rows.frequency
    p = member_share
    spread = (values_in * rows.frequency**2 * (1 - p) ** 2 + values_out * rows.frequency**2 * p**2).sum()
    return float(np.sqrt(spread) / n), int(n), int(round((values_in + values_out).sum()))


def fig3(t):
    from vrlib.experiments.mca import PAPER as P

    w = _wgan_gp(t)
    if w is None:
        return None
    se_gt3, n_gt3, k_gt3 = _share_se(t, w.members_among_freq_gt3, lambda x: x > 3)
    se_unique, n_unique, _ = _share_se(t, 1 - w.nonmembers_among_unique, lambda x: x == 1)  # the same se
    out = Outcome(
        f"WGAN-GP: {pct(w.members_among_freq_gt3)} members among frequency > 3 (of {n_gt3:,} records, {k_gt3:,} "
        f"distinct; se {f(se_gt3, 4)}), {pct(w.nonmembers_among_unique)} non-members among unique (of {n_unique:,}; "
        f"se {f(se_unique, 4)})"
    )
    # one sentence, two shares: one apart from the paper's fails it only beyond their family z
    fail_z, note = family_z(2), f" ({family_note(2)})"
    out.check(equivalent(w.members_among_freq_gt3 - P["members_among_freq_gt3"], se_gt3, ABOUT, fail_z=fail_z),
              f"members among frequency > 3: {pct(w.members_among_freq_gt3)}{note}", PAST_MARGIN)  # fmt: skip
    out.check(equivalent(w.nonmembers_among_unique - P["nonmembers_among_unique"], se_unique, ABOUT, fail_z=fail_z),
              f"non-members among unique: {pct(w.nonmembers_among_unique)}{note}", PAST_MARGIN)  # fmt: skip
    return out


def _statement_fig3() -> str:
    from vrlib.experiments.mca import PAPER as P

    return (
        f"Adult (the paper does not name the generator; ours is judged on its WGAN-GP release): about "
        f"{P['members_among_freq_gt3']:.0%} of the records released more than 3 times are members, about "
        f"{P['nonmembers_among_unique']:.0%} of the unique ones are not"
    )


def attack(t):
    from vrlib.experiments.mca import PAPER as P

    w = _wgan_gp(t)
    if w is None:
        return None
    out = Outcome(
        f"WGAN-GP: {pct(w.collision_rate)} colliding; {w.n_flagged:,.0f} flagged, {w.n_true:,.0f} members "
        f"(precision {f(w.precision, 2)})"
    )
    # Binomial se: the collision rate over the released records, the precision over the flagged ones.
    se_rate = float(np.sqrt(w.collision_rate * (1 - w.collision_rate) / w.n_released)) if w.n_released else np.nan
    se_precision = float(np.sqrt(w.precision * (1 - w.precision) / w.n_flagged)) if w.n_flagged else np.nan
    # two numbers of one notebook: one apart from it fails the row only beyond their family z
    fail_z, note = family_z(2), f" ({family_note(2)})"
    out.check(
        equivalent(w.collision_rate - P["wgan_gp_collision_rate"], se_rate, ABOUT, fail_z=fail_z),
        f"collision rate {pct(w.collision_rate)} (se {f(se_rate, 4)}){note}",
        PAST_MARGIN,
    )
    out.check(
        equivalent(w.precision - P["wgan_gp_precision"], se_precision, ABOUT, fail_z=fail_z),
        f"precision {f(w.precision, 2)} (se {f(se_precision, 4)}){note}",
        PAST_MARGIN,
    )
    # The binomial se is a lower bound (copies of one value are one draw): how many times as large it could be before
    # either check changes verdict (its interval's end reaching the margin: at Z inside it, at the family z beyond it),
    # from these numbers, not typed in.
    ends = [
        abs(abs(d) - ABOUT) / ((Z if abs(d) <= ABOUT else fail_z) * e)
        for d, e in ((w.collision_rate - P["wgan_gp_collision_rate"], se_rate), (w.precision - P["wgan_gp_precision"], se_precision))
        if e > 0
    ]  # fmt: skip
    if ends:
        out.ours += f"; each verdict stands for an se up to {min(ends):.1f} times the binomial one"
    return out


def _statement_attack() -> str:
    from vrlib.experiments.mca import PAPER as P

    return (
        f"WGAN-GP release (authors' notebook): about {P['wgan_gp_collision_rate']:.0%} colliding members; "
        f"{P['wgan_gp_flagged']:,} flagged, {P['wgan_gp_true']:,} members (precision {P['wgan_gp_precision']:.2f})"
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(PAPER, "§5.1 (Table 3, Adult)", "Table 3: Dataset Statistics for GAN synthesis. Pr[#x = 1]: unique training "
          "data proportion; Pr[#x ≤ 3]: Proportion of training data with frequency less than 3. ... Adult 31655 13567 "
          "79.39% 86.07%", _statement_table3, ("mca_table3",), table3,
          "each share within one percentage point of the paper's; the training and test counts equal", NB,
          "Table 3 — the training data"),
    Claim(PAPER, "§5.1 (Table 3, Lawschool)", "Lawsch ... 60215 25807 71.28% 81.85%",
          "Lawschool: 60,215 / 25,807 records, 71.28 % unique, 81.85 % frequency ≤ 3", unjudged=DATA),
    Claim(PAPER, "§5.1 (Table 3, Compas)", "Compas ... 3694 1584 63.72% 74.28%",
          "Compas: 3,694 / 1,584 records, 63.72 % unique, 74.28 % frequency ≤ 3", unjudged=DATA),
    Claim(PAPER, "§4.1 (Fig. 3, left: Adult)", "In Fig. 3 (left), approximately 96% of synthetic data with a sampled "
          "frequency of more than three are colliding members. Conversely, almost 91% unique synthetic data are "
          "non-colliding members in the Adult dataset.", _statement_fig3, ("mca_collisions", "mca_fig3"), fig3,
          f"each share's 95 % interval (over the release's records of that frequency, each distinct value one "
          f"cluster: the se and counts under 'ours') inside ± {ABOUT:g} of the paper's ('approximately', 'almost') "
          "(holds), wholly outside at the Bonferroni z of the two shares (fails), else inconclusive; one release, so the "
          "spread between GAN trainings is not measured", NB, "Fig. 3 — frequency of members and non-members in the release", "mca_fig3"),
    Claim(PAPER, "§4.1 (Fig. 3, Lawschool and Compas)", "Fig. 3 depicts the observations from three datasets used in "
          "this paper", "the same frequency pattern on Lawschool and Compas", unjudged=DATA),
    Claim(PAPER, "authors' notebook (not the paper's text)", "the WGAN-GP release of the authors' notebook",
          _statement_attack, ("mca_collisions",), attack,
          f"collision rate and precision each with its 95 % interval (binomial, over the released records and over "
          f"the flagged ones: a lower bound, copies of one value being one draw; 'ours' says how many times as large "
          f"it could be before a verdict changes) inside ± {ABOUT:g} of the notebook's (holds), wholly outside at the "
          "Bonferroni z of the two (fails), else inconclusive", NB,
          "Releases: collision rate and the attack at the default threshold, per generator", "mca_precision_recall",
          restates="a number of the authors' notebook, not of the paper's text"),
)  # fmt: skip
