"""The three risks of the Article 29 Working Party's opinion on anonymisation (WP216), measured natively.

Each risk is an attack that uses the release only, played twice: against training
records (*main*) and against the null half of the holdout (*control*: records the
generator never saw).  The control success rate is what the release teaches about the
population at large; only the excess is privacy risk:
``risk = (r_main - r_control) / (1 - r_control)`` (as in Giomi et al., PoPETs 2023).
Both rates get Wilson intervals at level ``(1 + level) / 2``, so the interval of the
risk built from their ends covers with probability ``level`` at least (Bonferroni).

* **Singling out.** A predicate is a released record's values on a random subset of
  ``predicate_columns`` known columns (continuous columns cut into deciles of the
  holdout).  It singles out a table when exactly one of its records matches.  Main
  table: a training subsample as large as the control table.
* **Linkability.** The known columns are split into two halves A and B (two sources of
  the attacker); a target is linked when its nearest released record on A and on B is
  the same (eq. 6 distances on each half).
* **Inference.** From a target's known columns the attacker takes the nearest released
  record and guesses its ``secret`` value: right when equal (categorical) or within 5 %
  of the column's holdout range (continuous).

The threat model (which columns the attacker knows, which one is secret) is stated in
the result; by default the secret is the last categorical column that takes more than one
value in the training records (the last such continuous one without such categorical
columns): a constant column has nothing to infer.  The attacker knows every other column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.parallel import derive_seed
from vrlib.uncertainty import wilson_interval

__all__ = ["threat_model", "wp29_risks"]


def threat_model(schema: Schema, known=None, secret=None, train: pd.DataFrame | None = None) -> dict:
    """The attacker's knowledge: ``{"known": [...], "secret": name}``, defaults filled in and checked.

    Parameters
    ----------
    schema : Schema
    known : sequence of str, optional
        Columns the attacker knows about a target (default: all but the secret).
    secret : str, optional
        The column the inference attack guesses (default: the last categorical column,
        among those that vary in ``train`` when it is given).
    train : DataFrame, optional
        The training records: the default secret is chosen among the columns that take
        more than one value there, and a secret that takes one value is refused.
    """
    columns = list(schema.columns)
    varying = [c for c in columns if c in train.columns and train[c].nunique() > 1] if train is not None else columns
    if secret is None:
        candidates = [c for c in [*schema.categorical, *schema.continuous] if c in varying] or columns
        in_kind = [c for c in candidates if c in schema.categorical] or candidates
        secret = in_kind[-1]
    if secret not in columns:
        raise VrlibError(f"--secret {secret!r} is not a column; choose one of {columns}")
    if train is not None and secret in train.columns and secret not in varying:
        raise VrlibError(
            f"the secret column {secret!r} takes one value in the training records, so there is nothing to infer; "
            f"choose one that varies with --secret (e.g. {varying[-1]!r})"
            if varying
            else f"the secret column {secret!r} takes one value in the training records, as does every column"
        )
    known = [c for c in columns if c != secret] if known is None else list(known)
    bad = [c for c in known if c not in columns]
    if bad:
        raise VrlibError(f"--known names column(s) {bad} that the tables do not have; choose among {columns}")
    if secret in known:
        raise VrlibError(f"the secret column {secret!r} cannot also be known; remove it from --known")
    if not known:
        raise VrlibError("the attacker must know at least one column (--known)")
    return {"known": known, "secret": secret}


def _codes(df: pd.DataFrame, schema: Schema, columns, edges: dict) -> np.ndarray:
    out = np.empty((len(df), len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        if c in schema.categorical:
            out[:, j] = df[c].cat.codes.to_numpy()
        else:
            out[:, j] = np.searchsorted(edges[c], df[c].to_numpy(np.float64), side="right")
    return out


def _rate(successes: int, n: int, level: float) -> dict:
    low, high = wilson_interval(successes, n, (1 + level) / 2)
    return {"rate": successes / n, "ci_low": low, "ci_high": high, "n": n}


def _risk(name: str, main: dict, control: dict, level: float) -> dict:
    def excess(m, c):
        return (m - c) / (1 - c) if c < 1 else 0.0

    return {
        "risk": max(0.0, excess(main["rate"], control["rate"])),
        "ci_low": max(0.0, excess(main["ci_low"], control["ci_high"])),
        "ci_high": min(1.0, max(0.0, excess(main["ci_high"], control["ci_low"]))),
        "main": main,
        "control": control,
        "level": level,
        "attack": name,
    }


def _nearest(targets, synthetic, schema: Schema, columns, encoder_data) -> np.ndarray:
    sub = schema.subset(columns)
    encoder = TableEncoder(sub).fit(encoder_data[list(columns)])
    _, idx = kneighbors_between(
        encoder.transform(targets[list(columns)]),
        encoder.transform(synthetic[list(columns)]),
        k=1,
        metric="minkowski",
        p=2.0,
    )
    return idx[:, 0]


def wp29_risks(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame,
    schema: Schema,
    known=None,
    secret=None,
    n_attacks: int = 2000,
    predicate_columns: int = 4,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """Singling-out, linkability and inference risks with intervals.

    Parameters
    ----------
    train : DataFrame
        The training records.
    synthetic : DataFrame
        The release.
    control : DataFrame
        Records the generator never saw (the null half of the holdout).
    schema : Schema
    known, secret
        The threat model (:func:`threat_model`).
    n_attacks : int
        Predicates (singling out) and targets per side (linkability, inference).
    predicate_columns : int
        Known columns per singling-out predicate.
    seed : int
    level : float

    Returns
    -------
    dict
        ``threat_model`` and, for ``singling_out``, ``linkability`` and ``inference``:
        ``risk``, ``ci_low``, ``ci_high``, and the ``main`` and ``control`` rates.
    """
    model = threat_model(schema, known, secret, train)
    known, secret = model["known"], model["secret"]
    if n_attacks < 1:
        raise VrlibError(f"n_attacks must be positive, got {n_attacks}")
    rng = np.random.default_rng(derive_seed(seed, "audit wp29"))
    m = min(len(control), len(train))
    main_table = train.iloc[np.sort(rng.permutation(len(train))[:m])]
    control_table = control.iloc[np.sort(rng.permutation(len(control))[:m])]
    n = min(n_attacks, m)
    main_targets, control_targets = main_table.iloc[rng.permutation(m)[:n]], control_table.iloc[rng.permutation(m)[:n]]
    everything = pd.concat([train, synthetic, control], ignore_index=True)
    edges = {
        c: np.unique(np.quantile(control[c].to_numpy(np.float64), np.linspace(0, 1, 11)[1:-1]))
        for c in schema.continuous
    }
    out = {"threat_model": model}

    # singling out
    cols = list(known)
    syn_codes = _codes(synthetic, schema, cols, edges)
    main_codes, control_codes = _codes(main_table, schema, cols, edges), _codes(control_table, schema, cols, edges)
    q = min(predicate_columns, len(cols))
    sources = rng.integers(0, len(synthetic), size=n)
    hits_main = hits_control = 0
    for s in sources:
        subset = np.sort(rng.permutation(len(cols))[:q])
        want = syn_codes[s, subset]
        hits_main += int(np.count_nonzero((main_codes[:, subset] == want).all(axis=1)) == 1)
        hits_control += int(np.count_nonzero((control_codes[:, subset] == want).all(axis=1)) == 1)
    out["singling_out"] = _risk("singling_out", _rate(hits_main, n, level), _rate(hits_control, n, level), level)

    # linkability
    if len(known) >= 2:
        half_a, half_b = known[: len(known) // 2], known[len(known) // 2 :]
        rates = []
        for targets in (main_targets, control_targets):
            linked = _nearest(targets, synthetic, schema, half_a, everything) == _nearest(
                targets, synthetic, schema, half_b, everything
            )
            rates.append(_rate(int(linked.sum()), n, level))
        out["linkability"] = _risk("linkability", *rates, level)
        out["linkability"]["columns"] = [half_a, half_b]
    else:
        out["linkability"] = None

    # inference
    rates = []
    if secret in schema.continuous:
        values = control[secret].to_numpy(np.float64)
        tolerance = 0.05 * float(values.max() - values.min())
    for targets in (main_targets, control_targets):
        guess = synthetic[secret].to_numpy()[_nearest(targets, synthetic, schema, known, everything)]
        truth = targets[secret].to_numpy()
        if secret in schema.continuous:
            right = np.abs(guess.astype(float) - truth.astype(float)) <= tolerance
        else:
            right = np.asarray(guess == truth, dtype=bool)
        rates.append(_rate(int(right.sum()), n, level))
    out["inference"] = _risk("inference", *rates, level)
    return out
