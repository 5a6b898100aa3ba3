"""Validation of ``vrlib audit`` on leak scenarios with a known answer: planted copies must be flagged, nulls must not.

Each dataset is split (seeded) into training records, a holdout and *other* records: Adult
10,000 / 10,000 / the remaining 25,222; Census (the teaching file's first 50,000 records)
10,000 / 10,000 / the remaining 30,000; releases of 10,000 records.
A background release is made by a generator fitted on the other records only, so no
training record is a member of it; then:

* **null** releases: from Synthpop, BayNet and TVAE (a neural generator, few epochs),
  and real unseen records (the other records themselves: heavy ties on categorical
  data);
* **planted** releases: training records put into a background release (replacing
  released rows): exact copies at 0.1 %, 0.5 % and 1 % of the release, continuous
  near-copies (one continuous value moved by 0.1 % of its standard deviation),
  categorical near-copies (one category changed), and exact copies of the 20 most
  isolated training records (largest V_5);
* a **shifted holdout** (one sex only) with a background release: the audit must warn
  (``holdout_shift``) and flag nothing;
* the real-unseen null again on four further splits of the data (the AUC's interval is a
  statement about one split; the other nulls share the first);
* **population duplicates**: the data drawn with replacement before the split, so that
  about a fifth of the holdout rows equal training rows (and twins fall within each part
  too), with a release from the other part: nothing may be flagged.

Per scenario: ``recall_top_k`` (planted records among the audit's top ``k`` = 100),
``flagged_tp`` / ``flagged_fp`` (flagged planted / other records at 5 % FDR),
``fdr`` (false share of the flagged), ``expected_fp`` (the false flags exact p-values would give
in expectation at the flag's Benjamini–Hochberg threshold), ``calibration`` (records not planted
with a p-value at most 1 % and 0.1 %, against the count exact p-values give), the membership AUC with its interval and the
copy-evidence (closeness) AUC, the shift warning and the audit's wall time; for planted
scenarios ``best_possible``, how many planted records any test calibrated on the holdout could
flag at best (:mod:`vrlib.audit.oracle`; ``best_possible_empirical`` without a tail model,
``best_possible_match_alone`` on the match alone), and ``bound_violations`` (planted records
whose audit p-value is below that bound: 0 for the distance to the nearest released record,
``assign=False``; the default assignment's statistic can go below it where records repeat).  Audits
run with the attacks ``copies,distance`` and without WP29 (their figures are not
validated here).

``--small`` runs a few seconds' version on a synthetic mixed table (the tests run it).
``--tolerant`` runs the audit with its tolerant flag (one statistic over the distance views and a
view in which one changed category is free, :func:`vrlib.audit.evidence.copy_evidence`).
``--cache DIR`` keeps each finished scenario's row, so an interrupted run resumes; the rows are named
by a hash of the audit's code (:func:`code_hash`), so that rows made by other code are made again.
The last line printed is one JSON object.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit_validation.py [--small] [--cache DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

TOP_K = 100
FDR = 0.05
OTHER_SPLITS = 4  # further splits of the data for the real-unseen null
LEVELS = (0.01, 0.001)  # calibration of the records that are not planted


# --------------------------------------------------------------------------- data


def small_population(n: int, seed: int) -> tuple[pd.DataFrame, object]:
    """A synthetic mixed table (the tests' kind): four categorical and three continuous columns."""
    from vrlib.data import Schema, prepare

    rng = np.random.default_rng(seed)
    a = rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])
    sex = rng.choice(["f", "m"], n)
    c = rng.choice(["u", "v", "w"], n)
    d = rng.choice([f"k{i}" for i in range(6)], n)
    x = rng.normal(size=n) + (a == "a") + 2.0 * (sex == "f")
    y = rng.gamma(2.0, size=n)
    z = rng.uniform(size=n) + 0.3 * (c == "u")
    df = pd.DataFrame({"a": a, "sex": sex, "c": c, "d": d, "x": x.round(4), "y": y.round(4), "z": z.round(4)})
    schema = Schema(["a", "sex", "c", "d"], ["x", "y", "z"])
    return prepare(df, schema), schema


def datasets(small: bool):
    """``(name, table, schema, sizes, sex column and value kept by the shifted holdout, generators)``."""
    if small:
        df, schema = small_population(6000, 0)
        yield "synthetic", df, schema, {"train": 600, "holdout": 1500, "release": 1000}, ("sex", "f"), ["synthpop"]
        return
    from vrlib.data import load

    df, schema = load("adult")
    sizes = {"train": 10000, "holdout": 10000, "release": 10000}
    yield "adult", df, schema, sizes, ("sex", "Female"), ["synthpop", "baynet", "tvae"]
    # the first 50,000 records of the teaching file (six regions): the 10,000-record random subset leaves a
    # 3,000-record holdout, whose empirical floor 1 / 3,001 cannot flag 0.5 % of a release
    df, schema = load("census", variant="first50000")
    sizes = {"train": 10000, "holdout": 10000, "release": 10000}
    yield "census", df, schema, sizes, ("Sex", "1"), ["baynet", "synthpop", "tvae"]


GENERATOR_PARAMS = {"tvae": {"epochs": 20}}


def make_release(df, schema, rows, generator, n, seed, small):
    """A release fitted on ``df.iloc[rows]`` (through vrlib's cache), or those real records themselves."""
    if generator is None:
        return df.iloc[rows[:n]].reset_index(drop=True)
    from vrlib.synthesis import SynthesisJob, synthesize_tables

    job = SynthesisJob(
        df, schema, generator, n, fit_seed=seed, sample_seed=seed + 1, rows=rows, params=GENERATOR_PARAMS.get(generator)
    )
    (table,) = synthesize_tables([job], cache=not small, n_jobs=1, progress=False)
    return table.reset_index(drop=True)


def plant(train, release, schema, rng, kind: str, share: float | None = None, n: int | None = None, vk=None):
    """``release`` with training records planted in place of released rows; returns it and the planted positions."""
    n = n if n is not None else max(1, int(round(share * len(release))))
    if kind == "outliers":
        idx = np.argsort(-vk, kind="stable")[:n]
    elif kind == "categorical" and schema.continuous:
        idx = rng.choice(len(train), n, replace=False)
    else:
        idx = rng.choice(len(train), n, replace=False)
    planted = train.iloc[idx].copy().reset_index(drop=True)
    varied = [c for c in schema.categorical if len(train[c].cat.categories) > 1]  # a constant column cannot change
    for i in range(n):
        if kind == "continuous":
            col = schema.continuous[rng.integers(len(schema.continuous))]
            planted.loc[i, col] = planted.loc[i, col] + 0.001 * float(train[col].std())
        elif kind == "categorical":
            col = varied[rng.integers(len(varied))]
            values = [v for v in train[col].cat.categories if v != planted.loc[i, col]]
            planted[col] = planted[col].astype(object)
            planted.loc[i, col] = values[rng.integers(len(values))]
    for col in schema.categorical:
        planted[col] = pd.Categorical(planted[col].astype(object), categories=train[col].cat.categories)
    keep = np.sort(rng.choice(len(release), len(release) - n, replace=False))
    out = pd.concat([release.iloc[keep], planted], ignore_index=True)
    return out, idx


# --------------------------------------------------------------------------- scenarios


def scenarios(name, df, schema, sizes, shift, generators, small):
    """Yield ``(scenario, kind, builder)``; a builder returns ``(train, release, holdout, planted positions)``."""
    from vrlib.experiments.audit import split_rows
    from vrlib.selection import vulnerability_scores

    n_other = len(df) - sizes["train"] - sizes["holdout"]
    train_rows, hold_rows, other_rows = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), 0)
    train = df.iloc[train_rows].reset_index(drop=True)
    holdout = df.iloc[hold_rows].reset_index(drop=True)
    n = sizes["release"]
    background = generators[0]

    def release(gen):
        return make_release(df, schema, other_rows, gen, n, 0, small)

    def planted(kind, share):
        rel, idx = _plant(train, release(background), schema, kind, share)
        return train, rel, holdout, idx

    for gen in generators:
        yield f"null {gen}", "null", gen, lambda gen=gen: (train, release(gen), holdout, np.array([], int))
    yield "null real unseen records", "null", "real", lambda: (train, release(None), holdout, np.array([], int))
    shares = (0.005,) if small else (0.001, 0.005, 0.01)
    for share in shares:
        yield (
            f"planted exact {share:.1%}",
            "planted",
            background,
            lambda share=share: planted("exact", share),
        )
    near = 0.02 if small else 0.005  # a small release needs a larger share for 20 planted records
    if schema.continuous:
        yield (
            f"planted continuous near-copies {near:.1%}",
            "planted",
            background,
            lambda: planted("continuous", near),
        )
    yield (
        f"planted categorical near-copies {near:.1%}",
        "planted",
        background,
        lambda: planted("categorical", near),
    )

    def outliers():
        vk = vulnerability_scores(train, schema).to_numpy()
        rel, idx = plant(train, release(background), schema, np.random.default_rng(5), "outliers", n=20, vk=vk)
        return train, rel, holdout, idx

    yield "planted unique outliers (20 copies)", "planted", background, outliers
    col, value = shift
    shifted = df.iloc[other_rows][df.iloc[other_rows][col] == value].reset_index(drop=True)
    yield (
        f"shifted holdout ({col} = {value} only)",
        "shift",
        background,
        lambda: (train, release(background), shifted.iloc[: sizes["holdout"]], np.array([], int)),
    )

    def duplicates():
        # a population with its own duplicates: records drawn with replacement from the data, then split as
        # before, so twins fall within and across the training records, the holdout and the generator's data
        rng = np.random.default_rng(11)
        pop = df.iloc[rng.integers(0, len(df), len(df))].reset_index(drop=True)
        tr, ho, ot = split_rows(len(pop), (sizes["train"], sizes["holdout"], n_other), 1)
        rel = make_release(pop, schema, ot, background, n, 1, small)
        return pop.iloc[tr].reset_index(drop=True), rel, pop.iloc[ho].reset_index(drop=True), np.array([], int)

    yield "population duplicates (drawn with replacement)", "null", background, duplicates

    def other_split(seed):
        # the same control on another split of the data: the AUC's interval is a statement about one split
        tr, ho, ot = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), seed)
        return (
            df.iloc[tr].reset_index(drop=True),
            df.iloc[ot[:n]].reset_index(drop=True),
            df.iloc[ho].reset_index(drop=True),
            np.array([], int),
        )

    for seed in () if small else range(1, 1 + OTHER_SPLITS):
        yield f"null real unseen records, split {seed}", "null", "real", lambda seed=seed: other_split(seed)


def _plant(train, release, schema, kind, share):
    return plant(train, release, schema, np.random.default_rng(int(share * 1e4) + len(kind)), kind, share=share)


def run_scenario(dataset, scenario, kind, generator, builder, schema, tolerant: bool = False) -> dict:
    import warnings

    import vrlib

    train, release, holdout, idx = builder()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = vrlib.audit(
            train,
            release,
            holdout,
            schema,
            seed=0,
            fdr=FDR,
            attacks=("copies", "distance"),
            wp29=False,
            tolerant=tolerant,
        )
    seconds = time.perf_counter() - start
    rec, s = res.records, res.summary
    planted = set(int(i) for i in idx)
    bound = best_possible(train, release, holdout, schema, idx, rec) if planted else None
    flagged = set(rec.loc[rec["flagged"], "index"].astype(int))
    tp, fp = len(flagged & planted), len(flagged - planted)
    # calibrated p-values give, at level t, about t x (records not planted) among them; Benjamini-Hochberg's
    # threshold (q x flagged / m) times those records is the false flags expected if the p-values are exact
    others = rec.loc[~rec["index"].astype(int).isin(planted), "p_value"].to_numpy()
    calibration = {str(t): [int((others <= t).sum()), t * len(others)] for t in LEVELS}
    expected_fp = len(others) * FDR * (tp + fp) / len(rec)
    auc, close = s["membership_auc"], s["attack_auc"]["closeness"]
    return {
        "dataset": dataset,
        "scenario": scenario,
        "kind": kind,
        "generator": generator,
        "tolerant": bool(tolerant),
        "n_train": len(train),
        "n_holdout": len(holdout),
        "n_release": len(release),
        "n_planted": len(planted),
        "recall_top_k": (len(set(rec.head(TOP_K)["index"].astype(int)) & planted) / len(planted)) if planted else None,
        "flagged_tp": tp,
        "flagged_fp": fp,
        "flag_recall": tp / len(planted) if planted else None,
        "fdr": fp / (tp + fp) if tp + fp else 0.0,
        "expected_fp": expected_fp,
        "calibration": calibration,
        "auc": auc["auc"],
        "auc_ci_low": auc["ci_low"],
        "auc_ci_high": auc["ci_high"],
        "closeness_auc": close["auc"],
        "closeness_auc_ci": [close["ci_low"], close["ci_high"]],
        "shift_warning": any(w["code"] == "holdout_shift" for w in s["warnings"]),
        "holdout_check_auc": s["holdout_check"]["auc"],
        "n_holdout_in_train": s["n_holdout_in_train"],
        "best_possible": bound["n_flaggable"] if bound else None,
        "best_possible_empirical": bound["n_flaggable_empirical"] if bound else None,
        "best_possible_match_alone": bound["n_flaggable_match_alone"] if bound else None,
        "beyond_holdout": bound["n_beyond_holdout"] if bound else None,
        "holdout_as_close_median": bound["holdout_as_close_median"] if bound else None,
        "bound_violations": bound["violations"] if bound else None,
        "p_copy_median": s["flag_resolution"]["p_copy_median"],
        "tail_extrapolated": s["flag_resolution"]["extrapolated"],
        "seconds": seconds,
    }


def best_possible(train, release, holdout, schema, idx, rec, table: bool = False) -> dict:
    """How many planted records a test calibrated on the holdout could flag at best (:mod:`vrlib.audit.oracle`).

    The other training records keep the audit's p-values.  ``violations`` counts planted records whose
    audit p-value is below their bound (0 unless the bound is wrong).  With ``table``, ``"table"`` holds
    the per-record bound (:func:`vrlib.audit.oracle.best_possible_flags`).
    """
    from vrlib.audit.oracle import best_possible_flags, match_closeness

    closeness = match_closeness(train, holdout, release, schema)
    p = rec.set_index(rec["index"].astype(int))["p_value"].sort_index()
    others = p.drop(index=[int(i) for i in idx]).to_numpy()
    tab, summ = best_possible_flags(closeness, idx, others, q=FDR)
    _, alone = best_possible_flags(closeness, idx, others, q=FDR, isolation=False)
    audit_p = p.loc[tab["index"]].to_numpy()
    return {
        **summ,
        **({"table": tab} if table else {}),
        "n_flaggable_match_alone": alone["n_flaggable"],
        "holdout_as_close_median": float(np.median(tab["holdout_as_close"])),
        "violations": int((audit_p < tab["p_best"].to_numpy() * (1 - 1e-9)).sum()),
    }


def table(rows) -> str:
    head = (
        "| dataset | scenario | generator | planted | in top 100 | flagged TP / FP | best possible | FDR | "
        "FP expected | p ≤ 0.001 (expected) | AUC [95 %] | warning |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        recall = f"{r['recall_top_k']:.0%}" if r["recall_top_k"] is not None else "–"
        best = "–" if r.get("best_possible") is None else f"{r['best_possible']} ({r['best_possible_empirical']})"
        obs, exp = r["calibration"]["0.001"]
        lines.append(
            f"| {r['dataset']} | {r['scenario']} | {r['generator']} | {r['n_planted']} | {recall} | "
            f"{r['flagged_tp']} / {r['flagged_fp']} | {best} | {r['fdr']:.0%} | {r['expected_fp']:.1f} | {obs} ({exp:.1f}) | "
            f"{r['auc']:.3f} "
            f"[{r['auc_ci_low']:.3f}, {r['auc_ci_high']:.3f}] | {'holdout_shift' if r['shift_warning'] else ''} |"
        )
    return "\n".join(lines)


def code_hash() -> str:
    """A hash of the code a scenario's row depends on: the audit's modules, the scenario builders and this file.
    It names the cached rows, so that a row made by other code is made again, not read as current."""
    import importlib
    import pkgutil

    import vrlib.audit
    from vrlib.cache import source_hash
    from vrlib.experiments import audit as experiments_audit

    modules = [importlib.import_module(f"vrlib.audit.{m.name}") for m in pkgutil.iter_modules(vrlib.audit.__path__)]
    return source_hash(vrlib.audit, *modules, experiments_audit, sys.modules[__name__])[:12]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="a few seconds' version on a synthetic table")
    parser.add_argument("--cache", default=None, help="folder keeping each finished scenario's row (resumable)")
    parser.add_argument("--only", default=None, help="run only the datasets named (comma-separated)")
    parser.add_argument(
        "--tolerant", action="store_true", help="the audit's tolerant flag (vrlib.audit(..., tolerant=True))"
    )
    args = parser.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    rows, start = [], time.perf_counter()
    code = code_hash() if cache else None
    for name, df, schema, sizes, shift, generators in datasets(args.small):
        if args.only and name not in args.only.split(","):
            continue
        for scenario, kind, generator, builder in scenarios(name, df, schema, sizes, shift, generators, args.small):
            slug = f"{name}-{scenario}{'-tolerant' if args.tolerant else ''}".replace(" ", "_").replace("/", "_")
            key = cache / f"{slug}-{code}.json" if cache else None
            if key is not None and key.exists():
                row = json.loads(key.read_text())
            else:
                row = run_scenario(name, scenario, kind, generator, builder, schema, tolerant=args.tolerant)
                if key is not None:
                    key.write_text(json.dumps(row))
            rows.append(row)
            print(
                f"{name:9s} {scenario:45s} tp {row['flagged_tp']:3d} fp {row['flagged_fp']:3d} "
                f"best {row['best_possible'] if row['best_possible'] is not None else '-'} "
                f"top{TOP_K} {row['recall_top_k'] if row['recall_top_k'] is not None else '-'} "
                f"auc {row['auc']:.3f} [{row['auc_ci_low']:.3f}, {row['auc_ci_high']:.3f}] {row['seconds']:.1f}s",
                file=sys.stderr,
                flush=True,
            )
    planted = [r for r in rows if r["kind"] == "planted"]
    nulls = [r for r in rows if r["kind"] == "null"]
    shifts = [r for r in rows if r["kind"] == "shift"]
    goals = {
        "planted_recall_top_k_min": min((r["recall_top_k"] for r in planted), default=None),
        "planted_flag_recall_min": min((r["flag_recall"] for r in planted), default=None),
        "planted_best_possible_recall_min": min((r["best_possible"] / r["n_planted"] for r in planted), default=None),
        "bound_violations": sum(r["bound_violations"] for r in planted),
        "planted_fdr_max": max((r["fdr"] for r in planted), default=None),
        "nulls_flagged": sum(r["flagged_fp"] for r in nulls),
        "nulls_auc_covering_half": sum(r["auc_ci_low"] <= 0.5 <= r["auc_ci_high"] for r in nulls),
        "n_nulls": len(nulls),
        "shift_warned": all(r["shift_warning"] for r in shifts),
        "shift_flagged": sum(r["flagged_tp"] + r["flagged_fp"] for r in shifts),
        "planted_fp": sum(r["flagged_fp"] for r in planted),
        "planted_fp_expected": sum(r["expected_fp"] for r in planted),
        "nulls_p_at_most_0.001": [sum(r["calibration"]["0.001"][i] for r in nulls) for i in (0, 1)],
        "nulls_p_at_most_0.01": [sum(r["calibration"]["0.01"][i] for r in nulls) for i in (0, 1)],
    }
    print(table(rows))
    out = {
        "benchmark": "bench_audit_validation",
        "small": args.small,
        "tolerant": args.tolerant,
        "rows": rows,
        "goals": goals,
        "seconds": time.perf_counter() - start,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    print(json.dumps(out, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
