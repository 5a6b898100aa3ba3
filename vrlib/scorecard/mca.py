"""Hu et al., *TableGAN-MCA* (CCS 2021): its quantitative claims, their quotes and their rules.

The noise: Table 3's shares are counts of the training data (no sampling noise: the split is the
paper's 70/30 of the 45,222 complete Adult records, so only the split's randomness remains, within
a hundredth of a percent); Fig. 3's shares are counts over one release of ~31,655 records, whose
binomial se (under 0.5 p.p. at these counts) is far inside the "approximately" the text states. The
spread between two trainings of the generator, which a release of the paper's WGAN-GP also carries,
is not measured (one release per generator): the tolerance is the text's "approximately", not a noise.
"""

from __future__ import annotations

from vrlib.scorecard.rules import ABOUT, POINT, Claim, Outcome, equivalent, f, pct

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
        out.check(d.at[s, "ours"] == d.at[s, "paper"], f"{s} {d.at[s, 'ours']:,.0f} (paper {d.at[s, 'paper']:,.0f})")
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


def fig3(t):
    from vrlib.experiments.mca import PAPER as P

    w = _wgan_gp(t)
    if w is None:
        return None
    out = Outcome(
        f"WGAN-GP: {pct(w.members_among_freq_gt3)} members among frequency > 3, "
        f"{pct(w.nonmembers_among_unique)} non-members among unique"
    )
    out.check(equivalent(w.members_among_freq_gt3 - P["members_among_freq_gt3"], 0.0, ABOUT),
              f"members among frequency > 3: {pct(w.members_among_freq_gt3)}")  # fmt: skip
    out.check(equivalent(w.nonmembers_among_unique - P["nonmembers_among_unique"], 0.0, ABOUT),
              f"non-members among unique: {pct(w.nonmembers_among_unique)}")  # fmt: skip
    return out


def _statement_fig3() -> str:
    from vrlib.experiments.mca import PAPER as P

    return (
        f"WGAN-GP on Adult: about {P['members_among_freq_gt3']:.0%} of the records released more than 3 times "
        f"are members, about {P['nonmembers_among_unique']:.0%} of the unique ones are not"
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
    out.check(
        equivalent(w.collision_rate - P["wgan_gp_collision_rate"], 0.0, ABOUT),
        f"collision rate {pct(w.collision_rate)}",
    )
    out.check(equivalent(w.precision - P["wgan_gp_precision"], 0.0, ABOUT), f"precision {f(w.precision, 2)}")
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
    Claim(PAPER, "§3 (Fig. 3, left: Adult)", "In Fig. 3 (left), approximately 96% of synthetic data with a sampled "
          "frequency of more than three are colliding members. Conversely, almost 91% unique synthetic data are "
          "non-colliding members in the Adult dataset.", _statement_fig3, ("mca_collisions",), fig3,
          f"each share within {ABOUT:g} of the paper's ('approximately', 'almost'; the binomial se of these counts "
          "is under 0.005; one release, so the spread between GAN trainings is not measured)", NB, "Fig. 3 — frequency of members and non-members in the release", "mca_fig3"),
    Claim(PAPER, "§3 (Fig. 3, Lawschool and Compas)", "Fig. 3 depicts the observations from three datasets used in "
          "this paper", "the same frequency pattern on Lawschool and Compas", unjudged=DATA),
    Claim(PAPER, "authors' notebook (not the paper's text)", "the WGAN-GP release of the authors' notebook",
          _statement_attack, ("mca_collisions",), attack,
          f"collision rate and precision each within {ABOUT:g} of the notebook's", NB,
          "Releases: collision rate and the attack at the default threshold, per generator", "mca_precision_recall"),
)  # fmt: skip
