"""Held-out check of ``vrlib audit``: near-copies made the way a person makes them, on Adult.

Not a benchmark row: the validation benchmark (``bench_audit_validation.py``) moves a
continuous value by 0.1 % of its standard deviation, a change no person makes.  Here a
few dozen training records are put into the benchmark's Synthpop release of Adult (the
same split, 10,000 training / 10,000 holdout / 10,000 released records, the release from
vrlib's cache), most of them with one value moved as a person would move it:

* ``exact``: a verbatim copy;
* ``age``: age ± 1;
* ``hours``: hours-per-week ± 1 or ± 2;
* ``fnlwgt``: fnlwgt rounded to the nearest 1,000, or moved by 100 to 900;
* ``gain``: capital-gain rounded to the nearest 100 or moved by 10 to 90 (records with a gain);
* ``category``: one category changed (in a column that varies).

Scenarios: ``person`` (8 exact and 8 of each continuous kind, 40 records) and ``mixed``
(10 exact, 20 with one continuous value moved, 10 with one category changed).  Each is run
at two planting seeds.  Per scenario and per kind: planted records in the top 100, flagged
true / false at 5 % FDR, and the best possible (:mod:`vrlib.audit.oracle`).

``--generator baynet`` or ``tvae`` plants them in the benchmark's release of that generator instead.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit_heldout.py [--seeds 0,1]``; the last
line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_validation import FDR, TOP_K, best_possible, make_release  # noqa: E402

KINDS = ("exact", "age", "hours", "fnlwgt", "gain", "category")
SCENARIOS = {
    "person": {"exact": 8, "age": 8, "hours": 8, "fnlwgt": 8, "gain": 8},
    "mixed": {"exact": 10, "age": 5, "hours": 5, "fnlwgt": 5, "gain": 5, "category": 10},
}


def nudge(record: pd.Series, kind: str, schema, categories, rng) -> pd.Series:
    """``record`` with one value moved as a person would move it (see the module's docstring)."""
    r = record.copy()
    if kind == "age":
        r["age"] = r["age"] + (1 if r["age"] < 90 and (r["age"] <= 17 or rng.random() < 0.5) else -1)
    elif kind == "hours":
        step = int(rng.integers(1, 3)) * (1 if rng.random() < 0.5 else -1)
        r["hours-per-week"] = float(np.clip(r["hours-per-week"] + step, 1, 99))
    elif kind == "fnlwgt":
        rounded = round(r["fnlwgt"] / 1000.0) * 1000.0
        if rounded == r["fnlwgt"] or rng.random() < 0.5:
            rounded = r["fnlwgt"] + float(rng.integers(1, 10)) * 100.0 * (1 if rng.random() < 0.5 else -1)
        r["fnlwgt"] = rounded
    elif kind == "gain":
        rounded = round(r["capital-gain"] / 100.0) * 100.0
        if rounded == r["capital-gain"] or rng.random() < 0.5:
            rounded = r["capital-gain"] + float(rng.integers(1, 10)) * 10.0 * (1 if rng.random() < 0.5 else -1)
        r["capital-gain"] = max(rounded, 1.0)
    elif kind == "category":
        varied = [c for c in schema.categorical if len(categories[c]) > 1]
        col = varied[rng.integers(len(varied))]
        others = [v for v in categories[col] if v != r[col]]
        r[col] = others[rng.integers(len(others))]
    return r


def plant_person(train, release, schema, counts: dict, seed: int):
    """``release`` with ``counts[kind]`` training records planted per kind; returns it, positions and kinds."""
    rng = np.random.default_rng(seed)
    categories = {c: list(train[c].cat.categories) for c in schema.categorical}
    has_gain = np.flatnonzero(train["capital-gain"].to_numpy() > 0)
    taken: set[int] = set()
    rows, idx, kinds = [], [], []
    for kind, n in counts.items():
        pool = has_gain if kind == "gain" else np.arange(len(train))
        pool = np.array([i for i in pool if i not in taken])
        for i in rng.choice(pool, n, replace=False):
            taken.add(int(i))
            rec = train.iloc[int(i)].astype(object)
            rows.append(nudge(rec, kind, schema, categories, rng))
            idx.append(int(i))
            kinds.append(kind)
    planted = pd.DataFrame(rows).reset_index(drop=True)[list(release.columns)]
    for c in schema.categorical:
        planted[c] = pd.Categorical(planted[c].astype(object), categories=train[c].cat.categories)
    for c in schema.continuous:
        planted[c] = planted[c].astype(float)
    keep = np.sort(rng.choice(len(release), len(release) - len(planted), replace=False))
    out = pd.concat([release.iloc[keep], planted], ignore_index=True)
    return out, np.array(idx), np.array(kinds)


def split(seed: int = 0, generator: str = "synthpop"):
    """The validation benchmark's Adult split and its release by ``generator`` (vrlib's cache)."""
    from vrlib.data import load
    from vrlib.experiments.audit import split_rows

    df, schema = load("adult")
    n_other = len(df) - 20000
    tr, ho, ot = split_rows(len(df), (10000, 10000, n_other), seed)
    train = df.iloc[tr].reset_index(drop=True)
    holdout = df.iloc[ho].reset_index(drop=True)
    release = make_release(df, schema, ot, generator, 10000, seed, False)
    return train, holdout, release, schema


BETAS = (1.0, 0.75, 0.5, 0.25)


def beyond_holdout(train, holdout, release, schema, idx, resolution: float = 0.0001) -> dict:
    """Planted records beyond every holdout record, per score ``log(d_nbr + eps) - beta log(d_1 + eps)``.

    In at least one of the audit's distance views (all columns; continuous columns alone).  ``beta = 1`` is
    the audit's closeness; a smaller ``beta`` weighs the neighbourhood's sparseness more than the match.  Only
    a record beyond every holdout record can get a p-value below ``1 / (n + 1)`` (through the tail model).
    """
    from vrlib.audit.evidence import closeness_scores
    from vrlib.data import Schema

    views = [schema, Schema([], list(schema.continuous))] if schema.categorical and schema.continuous else [schema]
    scores = []
    for sub in views:
        cols = list(sub.columns)
        sc = closeness_scores(
            {"train": train.iloc[idx][cols], "holdout": holdout[cols]}, release[cols], sub, resolution=resolution
        )
        scores.append((sc, resolution / len(cols)))
    out = {}
    for beta in BETAS:
        beyond = np.zeros(len(idx), bool)
        for sc, eps in scores:

            def s(d, eps=eps):
                return np.log(d["d_neighbourhood"].to_numpy() + eps) - beta * np.log(d["d_release"].to_numpy() + eps)

            beyond |= s(sc["train"]) > s(sc["holdout"]).max()
        out[str(beta)] = int(beyond.sum())
    return out


def run(train, holdout, release, schema, scenario: str, seed: int, **audit_kw) -> dict:
    import warnings

    import vrlib

    rel, idx, kinds = plant_person(train, release, schema, SCENARIOS[scenario], seed)
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = vrlib.audit(
            train, rel, holdout, schema, seed=0, fdr=FDR, attacks=("copies", "distance"), wp29=False, **audit_kw
        )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rec = res.records.set_index(res.records["index"].astype(int))
    top = set(res.records.head(TOP_K)["index"].astype(int))
    flagged = set(rec.index[rec["flagged"].to_numpy()])
    bound = best_possible(train, rel, holdout, schema, idx, res.records, table=True)
    per_kind = {}
    for kind in dict.fromkeys(kinds):
        sel = idx[kinds == kind]
        per_kind[kind] = {
            "planted": int(len(sel)),
            "top_k": int(len(set(sel) & top)),
            "flagged": int(len(set(sel) & flagged)),
            "best_possible": int(bound["table"].set_index("index").loc[sel, "flaggable"].sum()),
            "p_value_median": float(rec.loc[sel, "p_value"].median()),
            "p_rank_median": float(rec.loc[sel, "p_rank"].median()),
        }
    return {
        "scenario": scenario,
        "seed": seed,
        "settings": {k: v for k, v in audit_kw.items()},
        "n_planted": int(len(idx)),
        "top_k": int(len(set(idx) & top)),
        "flagged_tp": int(len(set(idx) & flagged)),
        "flagged_fp": int(len(flagged - set(idx))),
        "best_possible": bound["n_flaggable"],
        "best_possible_empirical": bound["n_flaggable_empirical"],
        "bound_violations": bound["violations"],
        "beyond_holdout_2d": bound["n_beyond_holdout"],
        "beyond_holdout_by_beta": beyond_holdout(train, holdout, rel, schema, idx, audit_kw.get("resolution", 0.0001)),
        "per_kind": per_kind,
        "n_flagged": int(len(flagged)),
        "seconds": seconds,
        "cpu_seconds": cpu,
    }


def table(rows) -> str:
    """Markdown: per scenario, planted records in the top 100 / flagged / best possible, per kind and in all."""
    kinds = [k for k in KINDS if any(k in r["per_kind"] for r in rows)]
    head = "| scenario | seed | settings | " + " | ".join(kinds) + " | all: top 100 / flagged / best | false flags |"
    lines = [head, "|" + "---|" * (len(kinds) + 5)]
    for r in rows:
        cells = [
            "–"
            if k not in r["per_kind"]
            else "{top_k} / {flagged} / {best_possible} of {planted}".format(**r["per_kind"][k])
            for k in kinds
        ]
        settings = ", ".join(f"{k}={v}" for k, v in r["settings"].items()) or "default"
        lines.append(
            f"| {r['scenario']} | {r['seed']} | {settings} | " + " | ".join(cells) + f" | {r['top_k']} / "
            f"{r['flagged_tp']} / {r['best_possible']} of {r['n_planted']} | {r['flagged_fp']} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1", help="planting seeds (comma-separated)")
    parser.add_argument("--scenarios", default="person,mixed")
    parser.add_argument("--resolution", type=float, default=None, help="the audit's resolution (default its own)")
    parser.add_argument("--tolerant", action="store_true", help="the audit's tolerant flag")
    parser.add_argument(
        "--generator", default="synthpop", help="the background release's generator (synthpop, baynet or tvae)"
    )
    args = parser.parse_args(argv)
    kw = {"resolution": args.resolution} if args.resolution is not None else {}
    if args.tolerant:
        kw["tolerant"] = True
    train, holdout, release, schema = split(generator=args.generator)
    rows = []
    for scenario in args.scenarios.split(","):
        for seed in [int(s) for s in args.seeds.split(",")]:
            row = run(train, holdout, release, schema, scenario, 100 + seed, **kw)
            row["generator"] = args.generator
            rows.append(row)
            kinds = " ".join(
                f"{k}:{v['top_k']}/{v['flagged']}/{v['best_possible']}of{v['planted']}"
                for k, v in row["per_kind"].items()
            )
            print(
                f"{scenario:7s} seed {seed}: top{TOP_K} {row['top_k']}/{row['n_planted']} flagged "
                f"{row['flagged_tp']} / {row['flagged_fp']} best {row['best_possible']} ({kinds}) "
                f"beyond holdout 2d {row['beyond_holdout_2d']} by beta {row['beyond_holdout_by_beta']} "
                f"{row['seconds']:.0f}s",
                file=sys.stderr,
                flush=True,
            )
    print(table(rows))
    print(json.dumps({"benchmark": "bench_audit_heldout", "rows": rows}, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
