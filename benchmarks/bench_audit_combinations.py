"""Candidate flag statistics of ``vrlib audit`` on the validation benchmark's releases: flags per candidate.

The audit flags on the Bonferroni minimum of two distance views (all columns; the
continuous columns alone).  This script computes, on the releases of
``bench_audit_validation.py`` (the same builders, so the same records), other single
statistics, each calibrated on the holdout as the kept views are (:class:`NullTail`,
checked, empirical only when the check fails), and counts the planted / other records
Benjamini–Hochberg flags at 5 % with each:

* ``bonferroni (kept)``: ``min(1, 2 min(p_all, p_continuous))``, the audit's flag;
* ``calibrated min (2 views)`` / ``(3 views)``: the smaller view p-value (with the
  near-match view for 3), calibrated against the holdout records' own smaller
  leave-one-out p-values (the holdout's largest score in a view gets the tail fitted
  without it);
* ``max`` / ``sum of raw closeness``: one score from the two views' closeness;
* ``continuous view alone``;
* ``tolerant view alone``: closeness in a Gower distance in which one changed category
  is free (``d - 1/F`` when a category differs), its nearest released records searched
  among the 20 nearest in each distance view;
* ``max raw (all, tolerant)`` and ``max raw (all, cont, tol)``: the largest of those
  views' closeness, one score.

Each is a fixed function of a record and the release, so a non-member's score is
exchangeable with the holdout's and its p-value is valid.  ``reaches`` counts the planted
records that :mod:`vrlib.audit.oracle` finds flaggable (with the other records at the
kept p-values) and the candidate flags.  ``--heldout`` runs releases not in the benchmark
(BayNet and TVAE backgrounds with copies planted; another split, seed 7); ``--seeds 1,2``
Synthpop releases of the benchmark's split with other seeds (a null, exact copies and
categorical near-copies at 0.5 %).

``--audit`` computes only the audit's own flag (:func:`vrlib.audit.evidence.copy_evidence` after
the audit's input checks) with its tolerant option off and on.

``--cost-audit`` times the whole audit on those tables, the option off and on alternately, in one
process.

``--cost`` times the tolerant view against the audit's two distance views (CPU time, one
process) on the tables of the 30,000-record Adult audit.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit_combinations.py [--dataset adult|census] [--heldout] [--cost]``.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_audit_validation as bench  # noqa: E402

RES, Q, SEED, K, K_CANDIDATES = 1e-4, 0.05, 0, 5, 20


def tolerant_view(tables, release, schema):
    """``d_1`` and ``d_nbr`` in Gower distance with one changed category free, for each table of ``tables``."""
    from vrlib.audit.evidence import gower_view
    from vrlib.data import Schema
    from vrlib.distance import kneighbors_between
    from vrlib.encoding import TableEncoder

    enc = TableEncoder(schema).fit(pd.concat([*tables.values(), release], ignore_index=True))
    rel, factor = gower_view(enc, release)
    cont = list(schema.continuous)
    enc_c = None
    if schema.continuous and schema.categorical:
        enc_c = TableEncoder(Schema([], cont)).fit(pd.concat([t[cont] for t in [*tables.values(), release]]))
        rel_c = gower_view(enc_c, release[cont])[0]
    n_cols = len(schema.columns)
    k_cand = min(K_CANDIDATES, len(release))  # a small release: every record is a candidate
    out = {}
    for name, df in tables.items():
        x, _ = gower_view(enc, df)
        _, near = kneighbors_between(x, rel, k=k_cand, metric="minkowski", p=1.0)
        if enc_c is not None:
            _, near_c = kneighbors_between(gower_view(enc_c, df[cont])[0], rel_c, k=k_cand, metric="minkowski", p=1.0)
        else:
            _, near_c = kneighbors_between(x, rel, k=min(2 * K_CANDIDATES, len(release)), metric="minkowski", p=1.0)
        cand = np.sort(np.concatenate([near, near_c], axis=1), axis=1)
        dup = np.zeros(cand.shape, bool)
        dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
        d1, nbr = np.empty(len(df)), np.empty(len(df))
        w_cat, w_cont = x.n_categorical / n_cols, x.n_continuous / n_cols  # eq. 6's block weights
        for s in range(0, len(df), 500):
            sl, c = slice(s, s + 500), cand[s : s + 500]
            oh = np.abs(x.onehot[sl][:, None, :] - rel.onehot[c]).sum(axis=2)
            co = np.abs(x.continuous[sl][:, None, :] - rel.continuous[c]).sum(axis=2)
            d = (w_cat * oh + w_cont * co) / factor - (oh > 0.5) / n_cols
            d = np.where(dup[sl], np.inf, np.maximum(d, 0.0))
            d.sort(axis=1)
            d1[sl], nbr[sl] = d[:, 0], d[:, 1 : K + 1].mean(axis=1)
        out[name] = (d1, nbr)
    return out


def scores(train, holdout, release, schema) -> tuple[dict, dict]:
    """Closeness per view (``all``, ``continuous``, ``tol``) and near-match score (``nm``); the oracle's views."""
    from vrlib.audit.matches import match_scores
    from vrlib.audit.oracle import match_closeness

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mc = match_closeness(train, holdout, release, schema, k=K, resolution=RES)
        ms = match_scores({"train": train, "holdout": holdout}, "holdout", release, schema, resolution=RES)
    tol = tolerant_view({"train": train, "holdout": holdout}, release, schema)
    c = {}
    for v in ("all", "continuous"):
        if v in mc:
            eps = RES / (len(schema.columns) if v == "all" else len(schema.continuous))
            for s in ("train", "holdout"):
                c[v, s] = np.log((mc[v][s]["isolation"].to_numpy() + eps) / (mc[v][s]["match"].to_numpy() + eps))
    eps = RES / len(schema.columns)
    for s in ("train", "holdout"):
        c["nm", s] = ms[s]["match_score"].to_numpy()
        c["tol", s] = np.log((tol[s][1] + eps) / (tol[s][0] + eps))
    return c, mc


def tail_p(null, values):
    from vrlib.audit.evidence import NullTail

    tail = NullTail().fit(null)
    if not tail.check(seed=SEED)["passed"]:
        tail = NullTail(extrapolate=False).fit(null)
    return tail.pvalues(values)


def loo_p(null):
    """Each holdout record's p-value against the other holdout records (the tail, fitted without it, beyond them)."""
    from vrlib.audit.pvalues import null_pvalues

    p = null_pvalues(null)
    top = int(np.argmax(null))
    others = np.delete(null, top)
    if null[top] > others.max():
        p[top] = tail_p(others, [null[top]])[0]
    return p


def candidates(c) -> dict[str, np.ndarray]:
    """The training records' p-value under each candidate statistic."""
    views = [v for v in ("all", "continuous") if (v, "train") in c]
    pv = {(v, s): None for v in (*views, "nm", "tol") for s in ("train", "holdout")}
    for v in (*views, "nm", "tol"):
        pv[v, "train"], pv[v, "holdout"] = tail_p(c[v, "holdout"], c[v, "train"]), loo_p(c[v, "holdout"])
    out = {"bonferroni (kept)": np.minimum(1, len(views) * np.min([pv[v, "train"] for v in views], axis=0))}
    mins = {"calibrated min (2 views)": views, "calibrated min (3 views)": (*views, "nm")}
    if len(views) == 2:
        mins["calibrated min (all, cont, tol)"] = (*views, "tol")
    for name, vs in mins.items():
        out[name] = tail_p(
            -np.log(np.min([pv[v, "holdout"] for v in vs], axis=0)),
            -np.log(np.min([pv[v, "train"] for v in vs], axis=0)),
        )
    if len(views) == 2:
        out["continuous view alone"] = pv["continuous", "train"]
        for name, f in (("max of raw closeness", np.maximum), ("sum of raw closeness", np.add)):
            out[name] = tail_p(
                f(c["all", "holdout"], c["continuous", "holdout"]), f(c["all", "train"], c["continuous", "train"])
            )
    out["tolerant view alone"] = pv["tol", "train"]
    for name, vs in (("max raw (all, tolerant)", ("all", "tol")), ("max raw (all, cont, tol)", (*views, "tol"))):
        out[name] = tail_p(np.max([c[v, "holdout"] for v in vs], axis=0), np.max([c[v, "train"] for v in vs], axis=0))
    return out


def audit_flags(train, holdout, release, schema) -> dict[str, np.ndarray]:
    """The audit's own flag p-values (:func:`vrlib.audit.evidence.copy_evidence`, after its input checks), off and on."""
    from vrlib.audit.evidence import copy_evidence
    from vrlib.audit.inputs import check_tables

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr, rel, ho = check_tables(train, release, holdout, schema)
        return {
            name: copy_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED, tolerant=tol)[0][
                "p_value"
            ].to_numpy()
            for name, tol in (("bonferroni (kept)", False), ("audit, tolerant", True))
        }


def evaluate(scenario, kind, train, holdout, release, idx, schema, audit: bool = False) -> list[dict]:
    from vrlib.audit.oracle import best_possible_flags, match_closeness
    from vrlib.audit.pvalues import benjamini_hochberg

    if audit:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mc = match_closeness(train, holdout, release, schema, k=K, resolution=RES)
        opts = audit_flags(train, holdout, release, schema)
    else:
        c, mc = scores(train, holdout, release, schema)
        opts = candidates(c)
    idx = np.asarray(idx, dtype=int)
    planted = np.zeros(len(train), bool)
    planted[idx] = True
    flaggable = set()
    if len(idx):
        tab, _ = best_possible_flags(mc, idx, np.delete(opts["bonferroni (kept)"], idx), q=Q)
        flaggable = set(tab.loc[tab["flaggable"], "index"].astype(int))
    rows = []
    for name, p in opts.items():
        _, flagged = benjamini_hochberg(p, Q)
        tp, fp = int((flagged & planted).sum()), int((flagged & ~planted).sum())
        rows.append(
            {
                "scenario": scenario,
                "kind": kind,
                "candidate": name,
                "n_planted": int(len(idx)),
                "flagged_tp": tp,
                "flagged_fp": fp,
                "expected_fp": float((~planted).sum() * Q * (tp + fp) / len(p)),
                "best_possible": len(flaggable) if len(idx) else None,
                "reaches": len(flaggable & set(np.flatnonzero(flagged & planted).tolist())) if len(idx) else None,
                "false_flagged": np.flatnonzero(flagged & ~planted).tolist(),
                "p_le_0.001_other": int((p[~planted] <= 1e-3).sum()),
            }
        )
    return rows


def heldout(df, schema, sizes):
    """Releases not in the benchmark: BayNet and TVAE backgrounds with copies planted; another split (seed 7)."""
    from vrlib.experiments.audit import split_rows

    n_other = len(df) - sizes["train"] - sizes["holdout"]
    for split, gens in ((0, ("baynet", "tvae")), (7, ("synthpop",))):
        tr, ho, ot = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), split)
        train, hold = df.iloc[tr].reset_index(drop=True), df.iloc[ho].reset_index(drop=True)
        for gen in gens:
            background = bench.make_release(df, schema, ot, gen, sizes["release"], 0, False)
            if split:
                yield f"split {split}: null {gen}", "null", lambda: (train, background, hold, np.array([], int))
            for kind in ("categorical", "exact", "continuous"):

                def build(kind=kind, background=background, train=train, hold=hold, split=split):
                    if split:
                        rel, idx = bench.plant(train, background, schema, np.random.default_rng(99), kind, share=0.005)
                    else:
                        rel, idx = bench._plant(train, background, schema, kind, 0.005)
                    return train, rel, hold, idx

                yield f"{'split %d: ' % split if split else ''}{gen} {kind} 0.5%", "planted", build


def other_backgrounds(df, schema, sizes, seeds):
    """The benchmark's split with Synthpop releases of other seeds: a null, exact copies and categorical near-copies."""
    from vrlib.experiments.audit import split_rows

    n_other = len(df) - sizes["train"] - sizes["holdout"]
    tr, ho, ot = split_rows(len(df), (sizes["train"], sizes["holdout"], n_other), 0)
    train, hold = df.iloc[tr].reset_index(drop=True), df.iloc[ho].reset_index(drop=True)
    for seed in seeds:
        background = bench.make_release(df, schema, ot, "synthpop", sizes["release"], seed, False)
        yield f"seed {seed}: null synthpop", "null", lambda b=background: (train, b, hold, np.array([], int))
        for kind in ("categorical", "exact"):

            def build(kind=kind, b=background):
                rel, idx = bench._plant(train, b, schema, kind, 0.005)
                return train, rel, hold, idx

            yield f"seed {seed}: synthpop {kind} 0.5%", "planted", build


def cost() -> dict:
    """CPU time of the tolerant view on the 30,000-record Adult audit's tables, in one process.

    The audit's copy evidence (:func:`vrlib.audit.evidence.copy_evidence`, every view, tails and
    checks) with its tolerant option off (the baseline) and on (the same searches made for
    :data:`TOLERANT_CANDIDATES` neighbours, then the candidates' tolerant distances); and, as
    before, the two distance views' searches against this script's own tolerant view (its own
    searches of 20 neighbours).
    """
    from vrlib.audit.evidence import closeness_scores, copy_evidence
    from vrlib.audit.inputs import check_tables
    from vrlib.data import Schema
    from vrlib.experiments.audit import adult_release

    train, synthetic, holdout, schema = adult_release("synthpop", n_train=30000, n_holdout=15222, n_synth=30000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train, synthetic, holdout = check_tables(train, synthetic, holdout, schema)
    tables, cont = {"train": train, "holdout": holdout}, list(schema.continuous)
    out = {}

    def timed(name, fn):
        c, w = time.process_time(), time.perf_counter()
        result = fn()
        out[f"{name}_cpu_s"], out[f"{name}_wall_s"] = time.process_time() - c, time.perf_counter() - w
        return result

    # warm-up (imports, thread pools) outside the timings, so that neither side pays it
    copy_evidence(train.iloc[:2000], holdout.iloc[:2000], synthetic.iloc[:2000], schema, tolerant=True)
    off = timed("copy_evidence_off", lambda: copy_evidence(train, holdout, synthetic, schema, k=K, resolution=RES))
    on = timed(
        "copy_evidence_tolerant",
        lambda: copy_evidence(train, holdout, synthetic, schema, k=K, resolution=RES, tolerant=True),
    )
    timed(
        "distance_views",
        lambda: (
            closeness_scores(tables, synthetic, schema, k=K, resolution=RES),
            closeness_scores(
                {k: v[cont] for k, v in tables.items()}, synthetic[cont], Schema([], cont), k=K, resolution=RES
            ),
        ),
    )
    timed("tolerant_view", lambda: tolerant_view(tables, synthetic, schema))
    out["cpu_ratio_copy_evidence"] = out["copy_evidence_tolerant_cpu_s"] / out["copy_evidence_off_cpu_s"]
    out["cpu_ratio"] = out["tolerant_view_cpu_s"] / out["distance_views_cpu_s"]
    # the kept views' closeness is the same with the larger searches (the first k + 1 neighbours are)
    out["same_closeness"] = bool(
        np.allclose(off[0]["closeness"], on[0]["closeness"])
        and np.allclose(off[0]["closeness_continuous"], on[0]["closeness_continuous"])
    )
    out["flagged_off"] = int(bench_flags(off[0]["p_value"]))
    out["flagged_tolerant"] = int(bench_flags(on[0]["p_value"]))
    return out


def cost_audit(repeats: int = 2) -> dict:
    """CPU time of the whole audit (every attack, WP29, seed 0) on the 30,000-record Adult tables, off and on, alternating.

    One process: ``vrlib.audit`` with ``tolerant`` off, on, off, on, ...; each call's CPU and wall
    time and the audit's own step times (``AuditResult.seconds``).
    """
    import vrlib
    from vrlib.experiments.audit import adult_release

    train, synthetic, holdout, schema = adult_release("synthpop", n_train=30000, n_holdout=15222, n_synth=30000)
    runs = []
    for _ in range(repeats):
        for tol in (False, True):
            c, w = time.process_time(), time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = vrlib.audit(train, synthetic, holdout, schema, seed=0, tolerant=tol)
            runs.append(
                {
                    "tolerant": tol,
                    "cpu_s": time.process_time() - c,
                    "wall_s": time.perf_counter() - w,
                    "steps_wall_s": res.seconds,
                    "n_flagged": res.summary["n_flagged"],
                }
            )
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    cpu = {t: [r["cpu_s"] for r in runs if r["tolerant"] == t] for t in (False, True)}
    return {
        "runs": runs,
        "cpu_ratio": float(np.mean(cpu[True]) / np.mean(cpu[False])),
        "max_cpu_s_tolerant": max(cpu[True]),
    }


def bench_flags(p) -> int:
    from vrlib.audit.pvalues import benjamini_hochberg

    return int(benjamini_hochberg(np.asarray(p), Q)[1].sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="adult", choices=("adult", "census"))
    parser.add_argument("--heldout", action="store_true", help="releases not in the benchmark instead")
    parser.add_argument("--seeds", default=None, help="Synthpop releases of these seeds (comma-separated) instead")
    parser.add_argument("--cost", action="store_true", help="time the tolerant view on the 30,000-record Adult audit")
    parser.add_argument(
        "--cost-audit", action="store_true", help="time the whole 30,000-record Adult audit, tolerant off and on"
    )
    parser.add_argument(
        "--audit", action="store_true", help="only the audit's own flag, tolerant off and on (copy_evidence)"
    )
    args = parser.parse_args(argv)
    if args.cost_audit:
        out = cost_audit()
        print(f"the whole audit, tolerant on / off, CPU time: {out['cpu_ratio']:.2f}", file=sys.stderr)
        print(json.dumps({"benchmark": "bench_audit_combinations", "cost_audit": out}))
        return 0
    if args.cost:
        out = cost()
        print(
            f"copy evidence, tolerant on / off, CPU time: {out['cpu_ratio_copy_evidence']:.2f}; "
            f"the script's own tolerant view / the two distance views: {out['cpu_ratio']:.2f}",
            file=sys.stderr,
        )
        print(json.dumps({"benchmark": "bench_audit_combinations", "cost": out}))
        return 0
    start, rows = time.perf_counter(), []
    for name, df, schema, sizes, shift, generators in bench.datasets(False):
        if name != args.dataset:
            continue
        if args.seeds:
            todo = list(other_backgrounds(df, schema, sizes, [int(x) for x in args.seeds.split(",")]))
        elif args.heldout:
            todo = list(heldout(df, schema, sizes))
        else:
            todo = [(s, k, b) for s, k, _, b in bench.scenarios(name, df, schema, sizes, shift, generators, False)]
        for scenario, kind, builder in todo:
            if kind == "shift":  # the audit withholds every flag there
                continue
            t = time.perf_counter()
            train, release, holdout, idx = builder()
            new = evaluate(scenario, kind, train, holdout, release, idx, schema, audit=args.audit)
            rows += new
            line = "  ".join(f"{r['candidate']}: {r['flagged_tp']}/{r['flagged_fp']}" for r in new)
            print(f"{scenario} ({time.perf_counter() - t:.0f} s)  {line}", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    summary = []
    for name, g in table.groupby("candidate", sort=False):
        planted, nulls = g[g["kind"] == "planted"], g[g["kind"] == "null"]
        summary.append(
            {
                "candidate": name,
                "planted_tp": int(planted["flagged_tp"].sum()),
                "planted_fp": int(planted["flagged_fp"].sum()),
                "planted_fp_expected": float(planted["expected_fp"].sum()),
                # false flags of one training set counted once (the planted scenarios of a split share it)
                "distinct_false": len(
                    {
                        (sc.split(":")[0] if sc.startswith("split") else "", i)
                        for sc, f in zip(planted["scenario"], planted["false_flagged"])
                        for i in f
                    }
                ),
                "nulls_flagged": int(nulls["flagged_fp"].sum()),
                "n_nulls": len(nulls),
            }
        )
    print(pd.DataFrame(summary).to_string(index=False))
    print(
        json.dumps(
            {
                "benchmark": "bench_audit_combinations",
                "dataset": args.dataset,
                "heldout": args.heldout,
                "seeds": args.seeds,
                "audit": args.audit,
                "rows": rows,
                "summary": summary,
                "seconds": time.perf_counter() - start,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
