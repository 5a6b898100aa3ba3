"""Benchmark of ``vrlib audit`` on Adult: cost at full size, planted-leak recall, null calibration, reproducibility.

1. **Cost.** A Synthpop release of Adult (30,000 training, 15,000 holdout, 30,000
   synthetic rows; ``--n-train`` etc.) is written to CSV files and audited by the
   command line in a child process, everything but the optional game: wall time
   (``audit_s``), its CPU time (``audit_cpu_s``: on a shared machine, the figure that
   does not depend on what else runs) and the child's peak resident memory
   (``audit_peak_gb``).  SDMetrics'
   DCR metric is timed on the same tables when ``sdmetrics`` is installed
   (``sdmetrics_dcr_s``; null otherwise).
2. **Planted leak.** A release made by Synthpop from records disjoint from the training
   records and the holdout, with 50 training records planted in it (half verbatim, half
   perturbed); ``planted_recall_at_100`` = how many of them the audit ranks in its top 100.
3. **Null calibration.** The same release without the planted records: ``null_auc`` with
   its interval, ``null_flag_share`` (flagged share at 5 % FDR) and the KS test of
   each attack's per-record p-values against the uniform law (``null_ks_p``).
4. **Reproducibility.** The null audit run twice with one seed: ``same_seed_identical``
   (summary.json and records.csv byte for byte).
5. **Vectorised against naive**, in this process: the empirical p-values (a loop over
   records against ``searchsorted``), DeLong's AUC variance (all pairs against mid-ranks)
   and the nearest released record (one record at a time against blocks); each ratio is
   naive seconds over vectorised seconds on the same inputs.

The last line printed is one JSON object with every figure.

Run: ``VRLIB_DATA_DIR=... python benchmarks/bench_audit.py``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _write_csvs(folder: Path, train, synthetic, holdout) -> None:
    for name, df in (("train", train), ("release", synthetic), ("holdout", holdout)):
        df.to_csv(folder / f"{name}.csv", index=False)


def bench_cost(args) -> dict:
    """The command line on the full-size release, in a child process (wall time and peak memory)."""
    from vrlib.experiments.audit import adult_release

    train, synthetic, holdout, schema = adult_release(
        "synthpop", n_train=args.n_train, n_holdout=args.n_holdout, n_synth=args.n_synth, seed=args.seed
    )
    with tempfile.TemporaryDirectory(prefix="vrlib-bench-audit-") as tmp:
        folder = Path(tmp)
        _write_csvs(folder, train, synthetic, holdout)
        command = [
            sys.executable,
            "-c",
            "import sys; from vrlib.cli import main; sys.exit(main())",
            "audit",
            "--train",
            str(folder / "train.csv"),
            "--synthetic",
            str(folder / "release.csv"),
            "--holdout",
            str(folder / "holdout.csv"),
            "--categorical",
            ",".join(schema.categorical),
            "--continuous",
            ",".join(schema.continuous),
            "--out",
            str(folder / "out"),
            "--seed",
            str(args.seed),
        ]
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"vrlib audit failed ({proc.returncode}): {proc.stderr}")
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_kb = usage.ru_maxrss
        summary = json.loads((folder / "out" / "summary.json").read_text())
    out = {
        "audit_s": seconds,
        "audit_cpu_s": usage.ru_utime + usage.ru_stime,
        "audit_peak_gb": peak_kb / 1e6,
        "adult_membership_auc": summary["membership_auc"]["auc"],
        "adult_membership_auc_ci": summary["membership_auc_ci"],
        "adult_n_flagged": summary["n_flagged"],
        "adult_n_verbatim": summary["n_verbatim"],
        "adult_dcr_share": summary["distance_shares"]["dcr_share"],
        "adult_nndr_share": summary["distance_shares"]["nndr_share"],
        "adult_tpr_at_fpr_0.001": summary["tpr_at_fpr"]["0.001"]["tpr"],
        "adult_tpr_at_fpr_0.01": summary["tpr_at_fpr"]["0.01"]["tpr"],
        "adult_auc_top_vk_decile": summary["auc_by_vk_decile"][-1]["auc"],
        "adult_auc_bottom_vk_decile": summary["auc_by_vk_decile"][0]["auc"],
        "adult_disagreements": summary["disagreements"],
        "adult_wp29": {k: summary["wp29"][k]["risk"] for k in ("singling_out", "linkability", "inference")},
    }
    try:
        from sdmetrics.single_table import DCROverfittingProtection  # optional extra
    except ImportError:
        out["sdmetrics_dcr_s"] = None
        out["sdmetrics_note"] = "sdmetrics not installed"
    else:
        metadata = {
            "columns": {
                c: {"sdtype": "categorical" if c in schema.categorical else "numerical"} for c in schema.columns
            }
        }
        out["sdmetrics_dcr_s"], value = _timed(
            lambda: DCROverfittingProtection.compute(train, synthetic, holdout, metadata)
        )
        out["sdmetrics_dcr"] = float(value)
    return out


def bench_calibration(args) -> dict:
    """Planted-leak recall, null calibration and same-seed reproducibility on a release made from other records."""
    from scipy import stats

    import vrlib
    from vrlib.experiments.audit import null_release, planted_release

    train, synthetic, holdout, schema = null_release(
        "synthpop", n_train=args.n_null, n_holdout=args.n_null, n_synth=args.n_null, seed=args.seed
    )
    planted, leaking = planted_release(train, synthetic, schema, n_planted=50, seed=args.seed)
    leak = vrlib.audit(train, leaking, holdout, schema, seed=args.seed, wp29=False)
    top = set(leak.records["index"].head(100))
    out = {"planted_recall_at_100": len(top & set(planted.tolist())), "n_planted": 50}
    with tempfile.TemporaryDirectory(prefix="vrlib-bench-null-") as tmp:
        runs = [
            vrlib.audit(train, synthetic, holdout, schema, seed=args.seed, wp29=False, out=Path(tmp) / str(i))
            for i in range(2)
        ]
        out["same_seed_identical"] = all(
            (Path(tmp) / "0" / f).read_bytes() == (Path(tmp) / "1" / f).read_bytes()
            for f in ("summary.json", "records.csv")
        )
    s = runs[0].summary
    out.update(
        null_auc=s["membership_auc"]["auc"],
        null_auc_ci=s["membership_auc_ci"],
        null_auc_covers_half=s["membership_auc"]["ci_low"] <= 0.5 <= s["membership_auc"]["ci_high"],
        null_flag_share=s["flagged_share"],
        null_n_verbatim=s["n_verbatim"],
        null_ks_p={
            a: float(stats.kstest(runs[0].records[f"p_{a}"], "uniform").pvalue)
            for a in s["settings"]["attacks"]
            if a != "copies"
        },
    )
    return out


def bench_vectorised(seed: int) -> dict:
    """Naive loops against the vectorised code, same inputs, in this process."""
    from vrlib.audit.pvalues import empirical_pvalues
    from vrlib.data import load
    from vrlib.distance import kneighbors_between, pairwise_distances
    from vrlib.encoding import TableEncoder
    from vrlib.uncertainty import delong_auc

    rng = np.random.default_rng(seed)
    scores, null = rng.normal(size=5000), rng.normal(size=7500)
    naive_s, naive = _timed(lambda: np.array([(1 + np.sum(null >= s)) / (len(null) + 1) for s in scores]))
    fast_s, fast = _timed(lambda: empirical_pvalues(scores, null))
    assert np.allclose(naive, fast)
    out = {"pvalues_naive_s": naive_s, "pvalues_vectorised_s": fast_s, "pvalues_ratio": naive_s / fast_s}
    pos, neg = rng.normal(0.2, 1, 3000), rng.normal(0, 1, 3000)

    def brute():
        psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
        return psi.mean(), np.sqrt(v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg))

    naive_s, (auc, se) = _timed(brute)
    fast_s, res = _timed(lambda: delong_auc(np.r_[np.ones(3000), np.zeros(3000)], np.r_[pos, neg]))
    assert abs(res["auc"] - auc) < 1e-12 and abs(res["se"] - se) < 1e-10
    out.update(delong_naive_s=naive_s, delong_vectorised_s=fast_s, delong_ratio=naive_s / fast_s)
    df, schema = load("adult")
    enc = TableEncoder(schema).fit(df)
    query, ref = enc.transform(df.iloc[:300]), enc.transform(df.iloc[15000:45000])

    def one_by_one():
        return np.array(
            [pairwise_distances(enc.transform(df.iloc[[i]]), ref, "minkowski", 2.0).min() for i in range(300)]
        )

    naive_s, naive = _timed(one_by_one)
    fast_s, (d, _) = _timed(lambda: kneighbors_between(query, ref, 1, "minkowski", 2.0))
    assert np.allclose(naive, d[:, 0])
    out.update(nearest_naive_s=naive_s, nearest_vectorised_s=fast_s, nearest_ratio=naive_s / fast_s)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=30000)
    parser.add_argument("--n-holdout", type=int, default=15000)
    parser.add_argument("--n-synth", type=int, default=30000)
    parser.add_argument("--n-null", type=int, default=10000, help="training, holdout and release size of parts 2-4")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-calibration", action="store_true")
    args = parser.parse_args(argv)
    result = {
        "benchmark": "audit",
        "seed": args.seed,
        "n_train": args.n_train,
        "n_holdout": args.n_holdout,
        "n_synth": args.n_synth,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }
    if not args.skip_cost:
        result.update(bench_cost(args))
        print(json.dumps({k: result[k] for k in ("audit_s", "audit_cpu_s", "audit_peak_gb")}), flush=True)
    if not args.skip_calibration:
        result.update(bench_calibration(args))
    result.update(bench_vectorised(args.seed))
    print(json.dumps(result, default=float))


if __name__ == "__main__":
    main()
