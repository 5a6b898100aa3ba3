"""The audit's flag with each released record assigned to its nearest real record (:mod:`vrlib.audit.assignment`), beside the kept flag.

Self-masking: a planted copy of training record ``t`` is the nearest released record of
``t``'s population near-twins in the holdout, which then score like copies and lift the
null that ``t`` is calibrated against.  The candidate assigns each released record to its
nearest record among training and holdout records pooled (one tied with several to none)
and scores each record only on the released records assigned to it; the rest (views,
tails, Bonferroni minimum, Benjamini–Hochberg at 5 %) is the audit's.

On the same releases and records, per scenario: planted records flagged (true / false) by
the kept flag (:func:`vrlib.audit.evidence.copy_evidence`, after the audit's input checks)
and by the candidate, planted records in the top 100 (ordered as the audit orders its
records: flagged, then ``p_rank`` = the Bonferroni minimum with the near-match view, then
the flag's p-value, then the effect), the training records not planted with p <= 0.001,
and the AUC (DeLong, mid-ranks) of the flag's p-value, training against holdout records.

* default: the validation benchmark's scenarios of ``--dataset`` (its builders, so its
  records; the shifted holdout left out, where the audit withholds every flag);
* ``--heldout``: the near-copies made as a person makes them
  (``bench_audit_heldout.py``: *person* and *mixed* at planting seeds 100 and 101) in the
  release of ``--generator``;
* ``--cost``: CPU and wall time of the whole audit, of its copy evidence and of the
  candidate on one 10,000-record release, in one process;
* ``--option-cost``: the same release, the audit (every default) and its copy evidence
  without and with the ``assign`` option, in one process, and the ratios with / without.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit_assignment.py [--dataset adult|census]
[--heldout --generator synthpop|baynet|tvae] [--cost] [--option-cost] [--cache DIR]``.  The last line is one JSON object.
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

RES, Q, SEED, K, TOP_K = 1e-4, 0.05, 0, 5, 100


def _order(flagged, p_rank, p_value, effect) -> np.ndarray:
    """Positions of the training records as the audit lists them: flagged first, then p_rank, p_value, effect."""
    return np.lexsort((-np.asarray(effect), p_value, p_rank, ~np.asarray(flagged)))


def evaluate(train, holdout, release, schema, idx, kinds=None) -> dict:
    """Kept flag and candidate on one release: flags, top 100, calibration and AUC (see the module's docstring)."""
    from vrlib.audit.assignment import assigned_evidence
    from vrlib.audit.evidence import copy_evidence
    from vrlib.audit.inputs import check_tables
    from vrlib.audit.pvalues import benjamini_hochberg
    from vrlib.audit.release import membership_auc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr, rel, ho = check_tables(train, release, holdout, schema)
        t0 = time.process_time()
        kept_tr, kept_ho, _ = copy_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED)
        t1 = time.process_time()
        cand_tr, cand_ho, info = assigned_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED)
        t2 = time.process_time()
    idx = np.asarray(idx, dtype=int)
    planted = np.zeros(len(tr), bool)
    planted[idx] = True
    p_near = kept_tr["p_near_match"].to_numpy()
    out = {"cpu_kept_s": t1 - t0, "cpu_candidate_s": t2 - t1, "candidate_warnings": info["warnings"]}
    n_views = sum(c.startswith("p_") and c not in ("p_value", "p_near_match", "p_rank") for c in cand_tr)
    for name, t, h in (("kept", kept_tr, kept_ho), ("assigned", cand_tr, cand_ho)):
        p = t["p_value"].to_numpy()
        if name == "kept":
            p_rank = t["p_rank"].to_numpy()
        else:  # as the audit's p_rank: the views' Bonferroni minimum with the near-match view
            p_rank = np.minimum(1.0, (n_views + 1) * np.minimum(p / n_views, p_near))
        _, flagged = benjamini_hochberg(p, Q)
        top = _order(flagged, p_rank, p, t["effect"].to_numpy())[:TOP_K]
        tp, fp = int((flagged & planted).sum()), int((flagged & ~planted).sum())
        auc = membership_auc(-np.log(p), -np.log(h["p_value"].to_numpy()))
        row = {
            "flagged_tp": tp,
            "flagged_fp": fp,
            "expected_fp": float((~planted).sum() * Q * (tp + fp) / len(p)),
            "top_k": int(planted[top].sum()),
            "false_flagged": np.flatnonzero(flagged & ~planted).tolist(),
            "p_le_0.001_other": int((p[~planted] <= 1e-3).sum()),
            "p_le_0.01_other": int((p[~planted] <= 1e-2).sum()),
            "n_other": int((~planted).sum()),
            "auc": auc["auc"],
            "auc_ci": [auc["ci_low"], auc["ci_high"]],
        }
        # the null the planted records must beat: the holdout's largest closeness per view (self-masking lifts it)
        for v in ("", "_continuous") if name == "kept" else ("_all", "_continuous"):
            col = f"closeness{v}"
            if col in h:
                top20 = np.sort(h[col].to_numpy())[::-1][:20]
                row[f"holdout_top{v or '_all'}"] = [float(top20[0]), float(top20[-1])]
        if kinds is not None:
            row["per_kind"] = {
                k: {
                    "planted": int((kinds == k).sum()),
                    "flagged": int(flagged[idx[kinds == k]].sum()),
                    "top_k": int(np.isin(idx[kinds == k], top).sum()),
                }
                for k in dict.fromkeys(kinds.tolist())
            }
        out[name] = row
    out["n_planted"] = int(len(idx))
    return out


def validation_todo(dataset, skip=()):
    for name, df, schema, sizes, shift, generators in bench.datasets(False):
        if name != dataset:
            continue
        for scenario, kind, generator, builder in bench.scenarios(name, df, schema, sizes, shift, generators, False):
            if kind != "shift" and generator not in skip:  # the audit withholds every flag on a shifted holdout
                yield f"{name}: {scenario}", kind, schema, builder


def heldout_todo(generator):
    from bench_audit_heldout import SCENARIOS, plant_person, split

    train, holdout, release, schema = split(generator=generator)
    for scenario in SCENARIOS:
        for seed in (100, 101):

            def build(scenario=scenario, seed=seed):
                rel, idx, kinds = plant_person(train, release, schema, SCENARIOS[scenario], seed)
                return train, rel, holdout, idx, kinds

            yield f"adult {generator}: {scenario} ({seed})", "planted", schema, build


def _timed(out: dict, label: str, fn):
    """Run ``fn`` (warnings silenced), put its CPU and wall seconds in ``out`` under ``label``, return its result."""
    c, w = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fn()
    out[f"{label}_cpu_s"], out[f"{label}_wall_s"] = time.process_time() - c, time.perf_counter() - w
    return result


def _exact_release():
    """The validation benchmark's Adult exact-copies 0.5 % release, as built and as the audit's checks read it.

    Returns ``name, schema, (train, release, holdout), planted, (tr, rel, ho)``.
    """
    from vrlib.audit.inputs import check_tables

    name, kind, schema, builder = next(t for t in validation_todo("adult") if "exact 0.5%" in t[0])
    train, release, holdout, idx = builder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked = check_tables(train, release, holdout, schema)
    return name, schema, (train, release, holdout), idx, checked


def cost() -> dict:
    """CPU and wall time of the whole audit, its copy evidence, and the candidate, on one 10,000-record release."""
    import vrlib
    from vrlib.audit.assignment import assigned_evidence
    from vrlib.audit.evidence import closeness_scores, copy_evidence, distance_views

    name, schema, (train, release, holdout), _, (tr, rel, ho) = _exact_release()
    out = {"scenario": name}

    def timed(label, fn):
        return _timed(out, label, fn)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # warm-up (imports, thread pools) outside the timings
        assigned_evidence(tr.iloc[:1000], ho.iloc[:1000], rel.iloc[:1000], schema)
        copy_evidence(tr.iloc[:1000], ho.iloc[:1000], rel.iloc[:1000], schema)
    timed("audit", lambda: vrlib.audit(train, release, holdout, schema, seed=SEED))
    timed("copy_evidence", lambda: copy_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED))
    timed("assigned_evidence", lambda: assigned_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED))
    # the audit's two distance views' searches alone: what the candidate would share with the audit
    views = distance_views(schema)
    timed(
        "distance_views",
        lambda: [
            closeness_scores({"train": tr[list(v.columns)], "holdout": ho[list(v.columns)]}, rel[list(v.columns)], v,
                             k=K, resolution=RES)
            for v in views.values()
        ],
    )  # fmt: skip
    out["ratio_to_copy_evidence"] = out["assigned_evidence_cpu_s"] / out["copy_evidence_cpu_s"]
    out["ratio_to_audit"] = out["assigned_evidence_cpu_s"] / out["audit_cpu_s"]
    return out


def option_cost() -> dict:
    """CPU and wall time of the audit and its copy evidence without and with ``assign``, on one 10,000-record release."""
    import vrlib
    from vrlib.audit.evidence import copy_evidence

    name, schema, (train, release, holdout), idx, (tr, rel, ho) = _exact_release()
    out = {"scenario": name}

    def timed(label, fn):
        return _timed(out, label, fn)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # warm-up (imports, thread pools) outside the timings
        for assign in (False, True):
            copy_evidence(tr.iloc[:1000], ho.iloc[:1000], rel.iloc[:1000], schema, assign=assign)
    for assign in (False, True):
        label = "on" if assign else "off"
        timed(
            f"copy_evidence_{label}",
            lambda: copy_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=SEED, assign=assign),
        )
        res = timed(f"audit_{label}", lambda: vrlib.audit(train, release, holdout, schema, seed=SEED, assign=assign))
        flagged = res.records.loc[res.records["flagged"], "index"].to_numpy()
        out[f"flagged_{label}"] = int(len(flagged))
        out[f"flagged_planted_{label}"] = int(np.isin(flagged, idx).sum())
    out["n_planted"] = int(len(idx))
    out["ratio_audit_cpu"] = out["audit_on_cpu_s"] / out["audit_off_cpu_s"]
    out["ratio_copy_evidence_cpu"] = out["copy_evidence_on_cpu_s"] / out["copy_evidence_off_cpu_s"]
    out["added_share_of_audit_cpu"] = (out["copy_evidence_on_cpu_s"] - out["copy_evidence_off_cpu_s"]) / out[
        "audit_off_cpu_s"
    ]
    return out


def seed_dependence(seeds) -> dict:
    """Flags at 5 % FDR of the copy evidence without and with ``assign`` at several seeds, on the 30,000-record Adult release.

    The release of ``docs/audit.md``'s *Measured: cost on Adult* (Synthpop, 30,000 training,
    15,222 holdout, 30,000 released records).  Without the assignment the seed only splits the
    holdout for the tail's check; with it, too (ties are assigned to no one, so no order enters the scores).
    """
    from vrlib.audit.evidence import copy_evidence
    from vrlib.audit.inputs import check_tables
    from vrlib.audit.pvalues import benjamini_hochberg
    from vrlib.experiments.audit import adult_release

    train, release, holdout, schema = adult_release("synthpop", n_train=30000, n_holdout=15222, n_synth=30000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr, rel, ho = check_tables(train, release, holdout, schema)
    out = {}
    for assign in (False, True):
        label = "on" if assign else "off"
        flags = []
        for seed in seeds:
            p = copy_evidence(tr, ho, rel, schema, k=K, resolution=RES, seed=seed, assign=assign)[0]["p_value"]
            flags.append(benjamini_hochberg(p.to_numpy(), Q)[1])
            print(f"assign {label}, seed {seed}: {int(flags[-1].sum())} flagged", file=sys.stderr, flush=True)
        out[label] = {
            "flagged": [int(f.sum()) for f in flags],
            "flagged_at_every_seed": int(np.logical_and.reduce(flags).sum()),
            "flagged_at_some_seed": int(np.logical_or.reduce(flags).sum()),
        }
    return {"seeds": list(seeds), **out}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="adult", choices=("adult", "census"))
    parser.add_argument("--heldout", action="store_true", help="person-made near-copies (bench_audit_heldout.py)")
    parser.add_argument("--generator", default="synthpop", help="with --heldout: synthpop, baynet or tvae")
    parser.add_argument("--cost", action="store_true", help="time the candidate on one 10,000-record release")
    parser.add_argument(
        "--option-cost", action="store_true", help="time the audit without and with assign=True on that release"
    )
    parser.add_argument(
        "--seeds",
        default=None,
        help="flags without and with assign at these seeds (comma-separated), 30,000-record Adult",
    )
    parser.add_argument("--skip", default="", help="leave out the scenarios of these generators (comma-separated)")
    parser.add_argument("--cache", default=None, help="folder keeping each finished scenario's row (resumable)")
    args = parser.parse_args(argv)
    if args.cost:
        out = cost()
        print(
            f"candidate / copy evidence CPU {out['ratio_to_copy_evidence']:.2f}; / whole audit {out['ratio_to_audit']:.2f}",
            file=sys.stderr,
        )
        print(json.dumps({"benchmark": "bench_audit_assignment", "cost": out}))
        return 0
    if args.option_cost:
        out = option_cost()
        print(
            f"with / without assign: audit CPU {out['ratio_audit_cpu']:.3f}, "
            f"copy evidence CPU {out['ratio_copy_evidence_cpu']:.2f}",
            file=sys.stderr,
        )
        print(json.dumps({"benchmark": "bench_audit_assignment", "option_cost": out}))
        return 0
    if args.seeds:
        out = seed_dependence([int(x) for x in args.seeds.split(",")])
        print(json.dumps({"benchmark": "bench_audit_assignment", "seed_dependence": out}))
        return 0
    cache = Path(args.cache) if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    code = bench.code_hash() if cache else None
    todo = heldout_todo(args.generator) if args.heldout else validation_todo(args.dataset, args.skip.split(","))
    rows, start = [], time.perf_counter()
    for scenario, kind, schema, builder in todo:
        key = cache / f"assign-{scenario}-{code}.json".replace(" ", "_").replace("/", "_") if cache else None
        if key is not None and key.exists():
            row = json.loads(key.read_text())
        else:
            t = time.perf_counter()
            built = builder()
            train, release, holdout, idx = built[:4]
            kinds = built[4] if len(built) > 4 else None
            row = {"scenario": scenario, "kind": kind, **evaluate(train, holdout, release, schema, idx, kinds)}
            row["seconds"] = time.perf_counter() - t
            if key is not None:
                key.write_text(json.dumps(row))
        rows.append(row)
        k, a = row["kept"], row["assigned"]
        print(
            f"{scenario:55s} kept {k['flagged_tp']}/{k['flagged_fp']} top {k['top_k']} "
            f"auc {k['auc']:.3f} | assigned {a['flagged_tp']}/{a['flagged_fp']} top {a['top_k']} "
            f"auc {a['auc']:.3f} [{a['auc_ci'][0]:.3f}, {a['auc_ci'][1]:.3f}] "
            f"p<=.001 {k['p_le_0.001_other']}/{a['p_le_0.001_other']} ({row['seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    summary = {}
    for name in ("kept", "assigned"):
        pl = [r[name] for r in rows if r["kind"] == "planted"]
        nu = [r[name] for r in rows if r["kind"] == "null"]
        summary[name] = {
            "planted_tp": sum(r["flagged_tp"] for r in pl),
            "planted_fp": sum(r["flagged_fp"] for r in pl),
            "planted_fp_expected": sum(r["expected_fp"] for r in pl),
            "top_k": sum(r["top_k"] for r in pl),
            # the planted scenarios of one run share one training set: a false record may recur
            "distinct_false": len({i for r in pl for i in r.get("false_flagged", [])}),
            "n_planted": sum(r["n_planted"] for r in rows if r["kind"] == "planted"),
            "nulls_flagged": sum(r["flagged_tp"] + r["flagged_fp"] for r in nu),
            "nulls_auc_covering_half": sum(r["auc_ci"][0] <= 0.5 <= r["auc_ci"][1] for r in nu),
            "n_nulls": len(nu),
            "nulls_p_le_0.001": [sum(r["p_le_0.001_other"] for r in nu), sum(r["n_other"] for r in nu) * 1e-3],
            "nulls_p_le_0.01": [sum(r["p_le_0.01_other"] for r in nu), sum(r["n_other"] for r in nu) * 1e-2],
        }
    print(pd.DataFrame(summary).T.to_string(), file=sys.stderr)
    print(
        json.dumps(
            {
                "benchmark": "bench_audit_assignment",
                "dataset": args.dataset,
                "heldout": args.heldout,
                "generator": args.generator if args.heldout else None,
                "rows": rows,
                "summary": summary,
                "seconds": time.perf_counter() - start,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
