"""The scorecard's shared vocabulary: a claim, the outcome of its rule, the verdict, and the noise comparisons.

A rule reads the committed tables and makes *checks*. A check is three-valued: ``True`` (what the
paper says is seen, beyond the noise the run has), ``False`` (the opposite is seen, beyond that noise)
or ``None`` (**inconclusive**: the difference lies within the noise). :func:`verdict` turns the checks
into one of :data:`VERDICTS`.

The noise is the one the committed tables carry: the spread over seeds (DOMIAS), over the 10
targets (achilles), over the records and the repeated games (lost), over the released records
(TableGAN-MCA). Differences between two means are compared with the standard error of the
difference of two independent means (:func:`se_difference`); where both means come from the same
seeds or targets the true error is smaller (the two are positively correlated), so the comparison
is conservative: it says *inconclusive* sooner than a paired test would, never *holds* sooner.

A claim that two values *match* (ours and the paper's; "not significantly different"; "equivalently") is
never judged by "the difference is within the noise": with enough noise that always passes. It is an
equivalence test against a *margin* stated per claim from the paper's own precision (:func:`equivalent`,
:func:`not_below`): it holds only when the 95 % interval of the difference lies inside the margin, fails when
the interval lies wholly beyond it (or, where the paper's value has a standard error of its own, when the two
values are significantly apart by a two-sample z-test), and is inconclusive otherwise.
"""

from __future__ import annotations

import math

import copy

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "VERDICTS",
    "Z",
    "ABOUT",
    "POINT",
    "PAST_MARGIN",
    "TOO_NOISY",
    "too_noisy",
    "FAILS",
    "Claim",
    "Outcome",
    "verdict",
    "se_difference",
    "se_mean",
    "ahead",
    "family_z",
    "family_note",
    "within",
    "replication_margin",
    "equivalent",
    "equivalent_interval",
    "not_below",
    "interval_side",
    "against_each",
    "most",
    "step_against",
    "n_steps",
    "Reads",
    "peek",
    "record",
]

VERDICTS = ("holds", "holds in part", "inconclusive", "does not hold", "not run", "not reproduced")
Z = 1.96  # two-sided 95 %: a difference counts when it exceeds Z standard errors
ABOUT = 0.05  # a value the paper states as "about" (or a share, without an interval): within five points
POINT = 0.01  # a share stated to the hundredth of a percent: within one percentage point
PAST_MARGIN = "interval reaches past the margin"  # an inconclusive equivalence: not necessarily within the noise
FAILS = "fails"  # a check that failed: the opposite of the claim seen beyond the noise (or outside the margin)
# An inconclusive equivalence whose 95 % half-width alone reaches its margin: no difference, however small, could be
# shown inside it, so the run cannot decide the match (it says nothing of ours against the paper's)
TOO_NOISY = "the run's noise is too large to decide"


@dataclass(frozen=True)
class Claim:
    """One quantitative statement of a paper: its words, where they are, and the rule that judges it.

    ``rule`` is None for a claim this companion does not reproduce; ``unjudged`` then says why
    (no data, no table of that quantity). ``substitute`` names what a reproduced claim is run on
    instead of the paper's data, and why. ``statement`` is the paper's value(s) in short
    (a callable where it is read from a registry of the paper's values, so it is never typed twice).
    ``restates`` marks a row that is not one more claim of the paper (see the field).
    """

    paper: str
    result: str  # where: "abstract", "§6.1", "Fig. 3b", "Table 2", "App. D (Fig. 13)"
    quote: str  # the paper's exact words
    statement: Callable[[], str] | str = ""  # the value the rule compares with, in short
    tables: tuple[str, ...] = ()  # table names, without profile or extension
    rule: Callable[[dict[str, pd.DataFrame]], Outcome | None] | None = None  # None: the tables lack what it needs
    rule_text: str = ""  # the checks, in words
    notebook: str | None = None  # key of report.NOTEBOOKS
    section: str | None = None  # a heading of that notebook, where the evidence is
    figure: str | None = None
    unjudged: str = ""  # why there is no rule (with rule None)
    substitute: str = ""  # reproduced on other data than the paper's: which, and why
    # A row that is not a further claim of the paper: another reading of a claim already on the scorecard (another
    # Ω, another reading of a baseline) or a number outside the paper's text. It says which; the summary counts it
    # apart, so that one statement of the paper is counted once.
    restates: str = ""

    def paper_statement(self) -> str:
        return self.statement() if callable(self.statement) else self.statement

    @property
    def reproduced(self) -> bool:
        return self.rule is not None


@dataclass
class Outcome:
    """What a rule found: our values in words, one three-valued check per comparison, and why checks did not pass."""

    ours: str
    checks: list = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def check(self, passed, what: str = "", unclear: str = "within the noise") -> None:
        """Record one check: True, False, or None (inconclusive); ``what`` says what it found when not True, after
        :data:`FAILS` when False and after ``unclear`` when None (an equivalence passes :data:`PAST_MARGIN`), so
        that each item of the evidence says which it is."""
        passed = None if passed is None else bool(passed)
        self.checks.append(passed)
        if passed is not True and what:
            self.failed.append(f"{unclear if passed is None else FAILS}: " + what)

    def why(self, shown: int = 3) -> str:
        """The first ``shown`` checks that did not pass, in words, those that failed first (they decide a "does not
        hold"), and how many more."""
        ordered = sorted(self.failed, key=lambda w: not w.startswith(f"{FAILS}: "))  # stable: else in check order
        more = len(ordered) - shown
        return "; ".join(ordered[:shown]) + (f"; {more} more" if more > 0 else "")


def verdict(checks: list) -> str:
    """The verdict of a list of three-valued checks.

    ``holds``: every check passes. ``does not hold``: some check fails and none passes.
    ``holds in part``: some pass and some fail or are inconclusive. ``inconclusive``: every check is
    inconclusive (within the noise, or an equivalence whose interval reaches past its margin), never
    ``does not hold``. ``not run``: no check.
    """
    if len(checks) == 0:
        return "not run"
    passed = sum(c is True for c in checks)
    failed = sum(c is False for c in checks)
    if passed == len(checks):
        return "holds"
    if passed:
        return "holds in part"
    return "does not hold" if failed else "inconclusive"


def se_mean(std: float, n: float) -> float:
    """Standard error of a mean of ``n`` values whose population std (ddof = 0, as the tables and the
    papers report ±) is ``std``: ``std / √(n − 1)``; NaN with fewer than two values."""
    return float(std / np.sqrt(n - 1)) if n > 1 else float("nan")


def se_difference(std_a: float, n_a: float, std_b: float, n_b: float) -> float:
    """Standard error of the difference of two independent means, from each side's population std and count."""
    return float(np.hypot(se_mean(std_a, n_a), se_mean(std_b, n_b)))


def ahead(difference: float, se: float, z: float = Z, fail_z: float | None = None):
    """True when ``difference`` > 0 by more than ``z`` standard errors, False when < 0 by more than ``fail_z`` of them
    (``z`` when not given; a family's :func:`family_z`), else None."""
    fail_z = z if fail_z is None else fail_z
    if pd.isna(difference):
        return None
    if pd.isna(se):  # no noise recorded: the sign alone, but never a verdict on an exact tie
        return None if difference == 0 else bool(difference > 0)
    if difference > z * se:
        return True
    if difference < -fail_z * se:
        return False
    return None


def family_z(m: int, alpha: float = 0.05) -> float:
    """The Bonferroni z of a family of ``m`` comparisons: Φ⁻¹(1 − α / (2m)), :data:`Z` (to rounding) for one.

    A claim about every one of many comparisons ("above every baseline at every setting") fails when any one of
    them is behind; with no true difference, one of ``m`` independent comparisons is behind beyond :data:`Z` by
    chance with probability 1 − 0.975^m (84 % for 72). Judging each one's *fail* side at this z keeps the chance of
    a spurious failure of the family at most α / 2 (Bonferroni holds whatever the comparisons' dependence). The
    *holds* side keeps :data:`Z` per comparison: every one of them must be ahead, which noise alone makes rarer,
    not more likely, as ``m`` grows."""
    m = int(m)
    if m < 1:
        raise ValueError(f"a family has at least one comparison, got {m}")
    return float(stats.norm.isf(alpha / 2 / m))


def family_note(m: int) -> str:
    """The fail threshold of a family of ``m`` comparisons in words, for the evidence; empty for one (:data:`Z`)."""
    return "" if m <= 1 else f"fails only beyond {family_z(m):.2f} se, Bonferroni over {m} comparisons"


def against_each(differences, fail_z: float | None = None):
    """One check of "ahead of every other": ``differences`` is ``(name, difference, se)`` per other, each
    judged by :func:`ahead`. Returns ``(check, name, difference, se)`` of the comparison that decides:
    ``False`` (the one furthest behind) when any other is ahead beyond the noise; ``True`` (the one
    closest, in standard errors) when every other is behind beyond the noise; else ``None`` (the
    closest of those within the noise). The other with the best mean is not always the one that decides:
    a lower mean with a larger se can stay within the noise while the best one is cleared.

    ``fail_z``: the threshold of "behind" (:func:`ahead`), the :func:`family_z` of the claim's comparisons where
    it is one of many; "ahead" stays at :data:`Z`."""
    rows = [(name, d, e, ahead(d, e, fail_z=fail_z)) for name, d, e in differences]
    if not rows:
        raise ValueError("against_each needs at least one other to compare with")

    def z(row):
        _, d, e, _ = row
        if pd.isna(d):
            return -np.inf  # a missing value decides: never a pass
        return d / e if e and not pd.isna(e) and e > 0 else float(np.sign(d)) * np.inf

    behind = [r for r in rows if r[3] is False]
    if behind:
        name, d, e, _ = min(behind, key=z)
        return False, name, d, e
    unclear = [r for r in rows if r[3] is None]
    name, d, e, v = min(unclear or rows, key=z)
    return (None if unclear else True), name, d, e


def step_against(values, ses, rising: bool, fail_z: float = Z):
    """The step between neighbouring points of a sweep that goes against its stated direction beyond the noise:
    ``(k, difference, se)`` of the one furthest against it (``k`` the index of its first point, ``difference`` signed
    so that the stated direction is positive), or None when no step is against it by more than ``fail_z`` se.

    A claim that a quantity rises (``rising``) or falls along a sweep ("increases with t", "drops when ε decreases")
    is contradicted by a fall between two neighbouring points beyond the noise, whatever its two ends show. Each step
    is a difference of two independent means (``ses``: each point's se); a step with either value missing is
    skipped; ``fail_z``: the family z of the claim's comparisons, the steps among them."""
    values, ses = list(values), list(ses)
    if len(values) != len(ses):
        raise ValueError(f"a sweep's values and ses differ in length: {len(values)} and {len(ses)}")
    worst = None
    for k in range(len(values) - 1):
        d = (values[k + 1] - values[k]) * (1 if rising else -1)
        e = float(np.hypot(ses[k], ses[k + 1]))
        if pd.isna(d) or pd.isna(e) or ahead(d, e, fail_z=fail_z) is not False:
            continue
        if worst is None or d / e < worst[1] / worst[2]:
            worst = (k, float(d), e)
    return worst


def n_steps(values) -> int:
    """How many neighbouring steps of a sweep :func:`step_against` compares (both values present)."""
    v = list(values)
    return sum(not (pd.isna(a) or pd.isna(b)) for a, b in zip(v, v[1:]))


def most(checks):
    """ "Most" of a list of three-valued checks: True when more than half are True, False when at most half can be
    (the Falses leave no majority, whatever the inconclusive ones turn out to be), else None."""
    checks = list(checks)
    if not checks:
        return None
    half = len(checks) / 2
    if sum(c is True for c in checks) > half:
        return True
    return False if len(checks) - sum(c is False for c in checks) <= half else None


def replication_margin(se_ours: float, se_paper: float, z: float = Z) -> float:
    """The equivalence margin for a value the paper itself estimated with noise: ``z`` √(se_ours² + se_paper²), the
    95 % half-width of the difference between two independent runs of one estimate (the prediction interval of a
    replication, Patil, Peng & Leek 2016). A margin of the paper's own half-width alone (``z`` se_paper) can never
    be met by a run as noisy as the paper's, however exact; with this one an exact reproduction holds, while our
    interval must still fit inside it, so a noisier run has less room, never more."""
    return z * math.hypot(float(se_ours), float(se_paper))


def equivalent_interval(low: float, high: float, margin: float):
    """An interval [low, high] of a difference against the equivalence margin ± ``margin``: True when it lies
    inside [−margin, margin], False when it lies wholly outside (beyond the margin on one side), else None."""
    if pd.isna(low) or pd.isna(high) or pd.isna(margin):
        return None
    if margin < 0:
        raise ValueError(f"an equivalence margin is a distance, got {margin}: pass its absolute value")
    if -margin <= low and high <= margin:
        return True
    if low > margin or high < -margin:
        return False
    return None


def equivalent(
    difference: float,
    se: float,
    margin: float,
    z: float = Z,
    significant_fails: bool = False,
    paper_se=None,
    fail_z: float | None = None,
):
    """Equivalence of two values: ``difference`` ± ``z`` se inside ± ``margin`` (True), wholly beyond it (False),
    else None (the interval reaches past the margin: too noisy to tell).

    ``significant_fails``: the claim is "not significantly different", so a difference beyond ``z`` se fails
    even inside the margin. ``paper_se``: the paper's value has its own standard error (the margin is then its
    own interval, ``z`` × it); the two values significantly apart (``|difference|`` beyond ``z`` × the two
    errors combined, a two-sample z-test) fail, which is sharper than the two intervals being apart.
    ``se`` 0 (a value without sampling noise, a count) compares the point with the margin;
    ``se`` NaN (noise not recorded) gives None: a match is never called on an interval that is not known.
    ``fail_z``: the interval that must lie wholly beyond the margin to fail, and the z of "significantly apart" with
    ``paper_se`` and of "significantly different" with ``significant_fails`` (``z`` when not given; a family's :func:`family_z` where the claim is that every one of many
    matches), the pass side staying at ``z``.
    """
    if pd.isna(difference) or pd.isna(se):
        return None
    se = float(se)
    low, high = difference - z * se, difference + z * se
    apart_z = z if fail_z is None else fail_z  # a family's "significantly apart" (and "different") at its z too
    if significant_fails and abs(difference) > z * se:  # "not significantly different" never holds then
        return False if abs(difference) > apart_z * se else None
    if paper_se is not None and not pd.isna(paper_se) and abs(difference) > apart_z * math.hypot(se, float(paper_se)):
        return False
    v = equivalent_interval(low, high, margin)
    if v is False and fail_z is not None and fail_z != z:
        wide = equivalent_interval(difference - fail_z * se, difference + fail_z * se, margin)
        return False if wide is False else None
    return v


def too_noisy(se: float, margin: float, z: float = Z) -> str:
    """Why an equivalence against ± ``margin`` cannot hold at this noise, in words, or "" when it can: ``z`` se alone
    at or beyond the margin (a difference of exactly 0 would still have its 95 % interval reach past it). A row's
    check then says :data:`TOO_NOISY` rather than :data:`PAST_MARGIN`: a run with less noise is needed to decide."""
    if pd.isna(se) or pd.isna(margin) or z * float(se) < margin:
        return ""
    return (f"{z:.2f} se = {z * float(se):.3f} alone is at least the margin ± {margin:.3f}: no difference, however "
            "small, could be shown inside it")  # fmt: skip


def not_below(difference: float, se: float, margin: float, z: float = Z, fail_z: float | None = None):
    """Non-inferiority ("more or equivalently"): ``difference`` ± ``z`` se wholly above −``margin`` (True), wholly
    below it at ``fail_z`` se (False; ``z`` when not given, a family's :func:`family_z` for a claim about every one of
    many comparisons), else None."""
    if pd.isna(difference):
        return None
    if margin < 0:
        raise ValueError(f"a non-inferiority margin is a distance, got {margin}: pass its absolute value")
    if pd.isna(se):  # noise not recorded: never called
        return None
    se = float(se)
    if difference - z * se >= -margin:
        return True
    if difference + (z if fail_z is None else fail_z) * se < -margin:
        return False
    return None


def within(value: float, low: float, high: float, se: float = 0.0, z: float = Z):
    """``value`` inside [low, high]: True when its interval (± ``z`` se) lies inside, False when it lies
    wholly outside, None when it straddles an end."""
    lo, hi = value - z * se, value + z * se
    if lo >= low and hi <= high:
        return True
    if hi < low or lo > high:
        return False
    return None


def interval_side(low: float, high: float, target: float):
    """An interval [low, high] against a value: True when it covers the value, False when it lies wholly to one side."""
    if pd.isna(low) or pd.isna(high):
        return None
    return bool(low <= target <= high)


def f(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f} %"


def span(values, digits: int = 3) -> str:
    """``a–b`` for the smallest and largest of ``values``, or the one value when they are equal."""
    low, high = f(min(values), digits), f(max(values), digits)
    return low if low == high else f"{low}–{high}"


def signed(x: float, se: float, digits: int = 3) -> str:
    """A difference with its standard error: ``+0.012 ± 0.005 se``."""
    return f"{x:+.{digits}f} (se {se:.{digits}f})"


# --------------------------------------------------------------------------- which tables a rule read


class Reads(Mapping):
    """The tables handed to a rule, remembering which ones it read: a row's size and commits are those tables' alone.

    Every way of reading a table's value goes through ``__getitem__`` and is recorded: ``t[name]``, ``t.get``,
    ``t.items()``, ``t.values()``, ``{**t}``, ``dict(t)``, ``t | other``, ``t.copy()``, ``copy.copy(t)`` (a plain
    dict of every table: each read). Asking whether a table is there (``name in t``) or iterating over the names
    reads no value and records nothing. The tables cannot be changed (``t[name] = df`` raises ``TypeError``).

    :func:`peek` is the one way to look at a table without counting it read, for a rule that chooses between tables
    (:func:`vrlib.scorecard.lost.settings`): it then records (:func:`record`) the ones whose values it kept.
    """

    def __init__(self, tables):
        self._tables = dict(tables)
        self.read: set[str] = set()

    def __getitem__(self, name):
        value = self._tables[name]
        self.read.add(name)
        return value

    def __contains__(self, name):  # Mapping's reads the value; a table only asked about is not read
        return name in self._tables

    def __iter__(self):
        return iter(self._tables)

    def __len__(self):
        return len(self._tables)

    def __repr__(self):
        return f"Reads({list(self._tables)}, read={sorted(self.read)})"

    def copy(self) -> dict:
        return dict(self)

    __copy__ = copy

    def __deepcopy__(self, memo) -> dict:
        return copy.deepcopy(dict(self), memo)

    def __or__(self, other) -> dict:
        return dict(self) | dict(other)

    def __ror__(self, other) -> dict:
        return dict(other) | dict(self)

    def peek(self, name, default=None):
        """A table's value, not counted read (see :func:`peek`)."""
        return self._tables.get(name, default)

    def record(self, names) -> None:
        """Count the named tables read (those it holds)."""
        self.read.update(n for n in names if n in self._tables)


def peek(t, name, default=None):
    """``t.get(name, default)``, not counting the table read when ``t`` is a :class:`Reads`: for a rule that reads
    a table to choose whether its values are used, and then records (:func:`record`) the ones that were."""
    return t.peek(name, default) if isinstance(t, Reads) else t.get(name, default)


def record(t, names) -> None:
    """Count the named tables read when ``t`` is a :class:`Reads` (any other mapping records nothing)."""
    if isinstance(t, Reads):
        t.record(names)
