"""``vrlib.audit.audit``: the whole audit of one release, and the files it writes.

Steps: check the tables (:mod:`~vrlib.audit.inputs`) and the holdout against the
training records (:mod:`~vrlib.audit.holdout`: a shift withholds the flag); split the
holdout in two seeded halves, *reference* (the attacker's population sample) and *null*
(known non-members); score every training record and every null record with each attack
(:mod:`~vrlib.audit.scores`); the copy evidence of every training record against every
holdout record (:mod:`~vrlib.audit.evidence`), flagged at a false-discovery rate
(:mod:`~vrlib.audit.pvalues`); V_k of every training record; release-level figures (:mod:`~vrlib.audit.release`); WP29 risks
(:mod:`~vrlib.audit.wp29`); the optional model-seeded game (:mod:`~vrlib.audit.game`)
and policy (:mod:`~vrlib.audit.policy`).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import vrlib
from vrlib.audit import pvalues as pv
from vrlib.audit.evidence import copy_evidence, copy_resolution
from vrlib.audit.holdout import SHIFT_AUC, holdout_check
from vrlib.audit.inputs import AuditWarning, check_tables
from vrlib.audit.policy import check_policy
from vrlib.audit.records import records_table
from vrlib.audit.release import (
    auc_by_decile,
    disagreements,
    distance_shares,
    membership_auc,
    tpr_at_fpr,
    verbatim_excess,
)
from vrlib.audit.scores import ATTACKS, membership_scores
from vrlib.audit.wp29 import threat_model, wp29_risks
from vrlib.data import Schema
from vrlib.distance import kneighbors_between
from vrlib.encoding import TableEncoder
from vrlib.errors import VrlibError
from vrlib.generators import REGISTRY as GENERATORS
from vrlib.parallel import derive_seed
from vrlib.params import check_integer, check_number
from vrlib.selection import vulnerability_scores

__all__ = ["AuditResult", "audit", "check_out", "FPRS", "MERGED"]

FPRS = (0.001, 0.01)
MERGED = ("copies", "distance")
SMALL_HOLDOUT = 0.01  # share of the training records: needing more copies than this to flag one, the holdout is small


@dataclass
class AuditResult:
    """What :func:`audit` measured.

    Attributes
    ----------
    summary : dict
        Release-level figures and settings (written as ``summary.json``).
    records : DataFrame
        One row per training record, most at risk first (``records.csv``).
    deciles : DataFrame
        Membership AUC by V_k decile.
    member_scores, null_scores : DataFrame
        Every attack's score and the merged statistic (``combined``,
        :func:`vrlib.audit.pvalues.merge`) of the training records and of the null records.
    seconds : dict
        Wall time of each step (not in ``summary.json``, which must not vary between runs).
    """

    summary: dict
    records: pd.DataFrame
    deciles: pd.DataFrame
    member_scores: pd.DataFrame
    null_scores: pd.DataFrame
    seconds: dict = field(default_factory=dict)

    def write(self, out) -> dict:
        """Write ``summary.json``, ``records.csv`` and ``report.html`` into folder ``out``; return their paths.

        The files are written into a temporary folder beside ``out`` which then takes its
        place, so ``out`` never holds a half-written report or one mixed with an earlier run's
        (an earlier report there is replaced; a folder holding other files is refused,
        :func:`check_out`).
        """
        import shutil
        import tempfile

        from vrlib.audit.report import render_html

        out = check_out(out).resolve()  # a name and a parent even for "." or "dir/"
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        try:
            (tmp / "summary.json").write_text(
                json.dumps(_plain(self.summary), indent=1, allow_nan=False) + "\n", encoding="utf-8"
            )
            self.records.to_csv(tmp / "records.csv", index=False, float_format="%.10g", lineterminator="\n")
            (tmp / "report.html").write_text(render_html(self), encoding="utf-8")
            tmp.chmod(0o755)
            old = None
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
                out.rename(old / "report")
            tmp.rename(out)
            if old is not None:
                shutil.rmtree(old)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return {name: out / f"{name}.{ext}" for name, ext in REPORT_FILES}


REPORT_FILES = (("summary", "json"), ("records", "csv"), ("report", "html"))


def check_out(out) -> Path:
    """``out`` as a Path, refused (VrlibError) when it is a file or a folder holding anything but an audit report."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise VrlibError(f"--out {str(out)!r} is a file; give a folder for the report (it is created if needed)")
    if out.is_dir():
        others = sorted(p.name for p in out.iterdir() if p.name not in {f"{n}.{e}" for n, e in REPORT_FILES})
        if others:
            raise VrlibError(
                f"--out {str(out)!r} holds files other than an audit report ({', '.join(others[:5])}); "
                "give a new or empty folder (an earlier report there is replaced)"
            )
    return out


def _plain(value):
    """Strict-JSON Python values (numpy scalars unwrapped, non-finite floats as null)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def audit(
    train: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    schema: Schema,
    *,
    seed: int = 0,
    fdr: float = 0.05,
    combine: str = "fisher",
    attacks=ATTACKS,
    merged=MERGED,
    k: int = 5,
    known=None,
    secret=None,
    wp29: bool = True,
    n_wp29_attacks: int = 2000,
    generator: str | None = None,
    epsilon: float | None = None,
    game_params: dict | None = None,
    policy=None,
    show_values: bool = False,
    max_density_rows: int = 10_000,
    logan_epochs: int = 100,
    level: float = 0.95,
    resolution: float = 0.0001,
    tolerant: bool = False,
    assign: bool | None = None,
    out=None,
) -> AuditResult:
    """Audit a synthetic release of ``train``: per-record membership risk, release-level risks, intervals.

    Parameters
    ----------
    train : DataFrame
        The records the generator was trained on (row i = record i).
    synthetic : DataFrame
        The release.
    holdout : DataFrame
        Records of the same population that were NOT used for training (at least 20).
    schema : Schema
        Declares each column categorical or continuous.
    seed : int
        Root seed: the holdout split, the subsamples, the classifier and the WP29 attacks.
    fdr : float
        False-discovery rate of the flag (Benjamini–Hochberg).
    combine : {"fisher", "bonferroni", "harmonic"}
        How the attacks' p-values of a record are merged before their calibration
        against the null records (:func:`vrlib.audit.pvalues.merge`).
    attacks : sequence of str
        Among :data:`vrlib.audit.scores.ATTACKS`: every one is run and reported.
    merged : sequence of str
        The attacks whose p-values make the combined p-value, the flag and the risk rank
        (default :data:`MERGED`: verbatim copies and the distance score; DOMIAS and LOGAN
        D1, which model densities, are reported beside them: on Adult they add little
        per-record signal and dilute the merge).  Only those of ``attacks`` are used.
    k : int
        Neighbours of the V_k vulnerability score.
    known, secret
        The WP29 threat model (:func:`vrlib.audit.wp29.threat_model`).
    wp29 : bool
        Measure the WP29 risks.
    n_wp29_attacks : int
        Predicates and targets per side of the WP29 attacks.
    generator : str, optional
        Play the model-seeded game with this generator (:mod:`vrlib.audit.game`).
    epsilon : float, optional
        The declared ε of a PrivBayes release (checked against the game's bound).
    game_params : dict, optional
        Sizes of the game (see :func:`vrlib.audit.game.play`).
    policy : path or dict, optional
        Thresholds (:mod:`vrlib.audit.policy`); the verdict goes into the summary.
    show_values : bool
        Put the record values into ``records.csv`` and the report.
    max_density_rows, logan_epochs
        Sizes of the DOMIAS and LOGAN D1 attacks (:func:`vrlib.audit.scores.membership_scores`).
    level : float
        Coverage of every interval.
    resolution : float
        Changes smaller than this share of one column's range count as copies in the
        copy evidence (:mod:`vrlib.audit.evidence`).
    tolerant : bool
        Flag on one statistic, the largest closeness of the distance views and of a view in
        which one changed category is free (:func:`vrlib.audit.evidence.copy_evidence`),
        instead of the Bonferroni minimum of the distance views.
    assign : bool, optional
        Score each record on the released records assigned to it, each released record going
        to its nearest record among the training and holdout records pooled (one equally near to
        several of them to none), so that a copy of a training record does not make that
        record's near-twins in the holdout look like copies too (self-masking;
        :mod:`vrlib.audit.assignment`).  Default (None): on, unless ``tolerant``, which
        scores on every released record and cannot be combined with it.
    out : path, optional
        Folder to write ``report.html``, ``summary.json`` and ``records.csv`` into.

    Returns
    -------
    AuditResult
    """
    check_number("the false-discovery rate", fdr, above=0, below=1)
    check_number("resolution", resolution, above=0, below=1)
    if combine not in pv.COMBINATIONS:
        raise VrlibError(f"unknown combination {combine!r}; choose one of {pv.COMBINATIONS}")
    check_integer("seed", seed, minimum=0)
    if assign is None:
        assign = not tolerant
    if tolerant and assign:  # before the long work
        raise VrlibError(
            "the tolerant view and the assignment are separate options: choose one "
            "(the tolerant view scores on every released record; drop assign=True / --assign to use it)"
        )
    if not wp29 and (known is not None or secret is not None):  # else a misspelt column passes unseen
        raise VrlibError("--known and --secret describe the WP29 attacker: drop them or drop --no-wp29 (wp29=False)")
    if (
        generator is not None and generator not in GENERATORS
    ):  # a typo would otherwise end the audit after its long work
        raise VrlibError(f"unknown generator {generator!r}; choose one of {sorted(GENERATORS)}")
    if out is not None:
        check_out(out)  # before the long work
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _audit(
            train,
            synthetic,
            holdout,
            schema,
            seed=seed,
            fdr=fdr,
            combine=combine,
            attacks=attacks,
            merged=merged,
            k=k,
            known=known,
            secret=secret,
            wp29=wp29,
            n_wp29_attacks=n_wp29_attacks,
            generator=generator,
            epsilon=epsilon,
            game_params=game_params,
            policy=policy,
            show_values=show_values,
            max_density_rows=max_density_rows,
            logan_epochs=logan_epochs,
            level=level,
            resolution=resolution,
            tolerant=tolerant,
            assign=assign,
        )
    seen = {w["message"] for w in result.summary["warnings"]}
    others = []
    for w in caught:  # each once: vrlib's own in summary.json, then all given to the caller
        message = str(w.message)
        if message in seen:
            continue
        seen.add(message)
        if issubclass(w.category, UserWarning) and "vrlib" in Path(w.filename).parts:
            result.summary["warnings"].append({"code": getattr(w.message, "code", "data"), "message": message})
        else:
            others.append(w)
    for w in result.summary["warnings"]:
        warnings.warn(AuditWarning(w["code"], w["message"]), stacklevel=2)
    for w in others:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if out is not None:
        result.write(out)
    return result


def _audit(
    train,
    synthetic,
    holdout,
    schema,
    *,
    seed,
    fdr,
    combine,
    attacks,
    merged,
    k,
    known,
    secret,
    wp29,
    n_wp29_attacks,
    generator,
    epsilon,
    game_params,
    policy,
    show_values,
    max_density_rows,
    logan_epochs,
    level,
    resolution,
    tolerant=False,
    assign=False,
) -> AuditResult:
    """The audit's steps (:func:`audit` collects their warnings)."""
    seconds = {}
    notes = []  # warnings of the audit's own judgement, in summary.json first
    t0 = time.perf_counter()
    info = {}
    train, synthetic, holdout = check_tables(train, synthetic, holdout, schema, info=info)
    if wp29:
        threat_model(schema, known, secret, train)  # refuse a bad threat model before the long steps
    if not 1 <= k < len(train):
        raise VrlibError(f"k must be between 1 and {len(train) - 1} (the training records less one), got {k}")
    if len(synthetic) < k + 1:
        raise VrlibError(f"the release has {len(synthetic)} records; the audit needs more than k = {k}")
    order = np.random.default_rng(derive_seed(seed, "audit holdout split")).permutation(len(holdout))
    half = len(holdout) // 2
    reference = holdout.iloc[np.sort(order[:half])].reset_index(drop=True)
    null = holdout.iloc[np.sort(order[half:])].reset_index(drop=True)
    seconds["checks"] = time.perf_counter() - t0

    t = time.perf_counter()
    check = holdout_check(train, holdout, schema, seed=seed, level=level)
    if check["shift"]:
        notes.append(
            {
                "code": "holdout_shift",
                "message": f"a classifier tells training from holdout records with AUC {check['auc']:.3f} "
                f"[{check['ci_low']:.3f}, {check['ci_high']:.3f}]: the holdout is not a sample of the training "
                "data's population, so the membership figures compare two populations and are not evidence of "
                "a leak, and no record is flagged; give a holdout split from the same data before training",
            }
        )
    elif check["ci_low"] > 0.5:  # told apart, below SHIFT_AUC: the flag is kept, the membership figures qualified
        notes.append(
            {
                "code": "holdout_difference",
                "message": f"a classifier tells training from holdout records a little, AUC {check['auc']:.3f} "
                f"[{check['ci_low']:.3f}, {check['ci_high']:.3f}] (a holdout is called shifted, and no record "
                f"flagged, from {SHIFT_AUC}): the holdout may come from a slightly different population (another "
                "period or region, a column transformed in the training data only), and a membership AUC up to "
                "about that much can be that difference rather than a leak; records are still flagged; if the "
                "holdout was not split from the same data before training, give one that was",
            }
        )
    seconds["holdout check"] = time.perf_counter() - t

    t = time.perf_counter()
    member_scores, null_scores = membership_scores(
        train,
        null,
        synthetic,
        reference,
        schema,
        seed=seed,
        attacks=attacks,
        max_density_rows=max_density_rows,
        logan_epochs=logan_epochs,
    )
    seconds["attacks"] = time.perf_counter() - t

    # copy evidence: every holdout record is a known non-member here
    t = time.perf_counter()
    ev_train, ev_holdout, evidence = copy_evidence(
        train, holdout, synthetic, schema, k=k, resolution=resolution, seed=seed, tolerant=tolerant, assign=assign
    )
    if evidence["warnings"]:  # one warning however many views' tails failed their check
        notes.append({"code": "tail_miscalibrated", "message": "; ".join(evidence["warnings"])})
    p_value = ev_train["p_value"].to_numpy()
    q_values, flagged = pv.benjamini_hochberg(p_value, fdr)
    n_flagged_unchecked = int(flagged.sum())
    if check["shift"]:
        flagged = np.zeros(len(train), dtype=bool)
    seconds["copy evidence"] = time.perf_counter() - t

    member_p = pd.DataFrame({a: pv.empirical_pvalues(member_scores[a], null_scores[a]) for a in member_scores})
    use = [a for a in member_p.columns if a in merged]
    if not use:
        raise VrlibError(f"none of the merged attacks {list(merged)} is among the attacks run {list(member_p.columns)}")
    # one map from score to p-value for both sides: ties stay ties in the merged statistic
    mid_member = pd.DataFrame({a: pv.midrank_pvalues(member_scores[a], null_scores[a]) for a in use})
    mid_null = pd.DataFrame({a: pv.midrank_pvalues(null_scores[a], null_scores[a]) for a in use})
    member_merged, null_merged = pv.merge(mid_member, combine), pv.merge(mid_null, combine)
    member_scores = member_scores.assign(combined=member_merged)
    null_scores = null_scores.assign(combined=null_merged)

    t = time.perf_counter()
    vk = vulnerability_scores(train, schema, k=k).to_numpy()
    seconds["vulnerability"] = time.perf_counter() - t
    records = records_table(
        train,
        member_scores.drop(columns="combined"),
        member_p,
        member_merged,
        ev_train,
        p_value,
        q_values,
        flagged,
        vk,
        show_values,
    )

    t = time.perf_counter()
    auc = membership_auc(member_scores["combined"], null_scores["combined"], level)
    per_attack = {a: membership_auc(member_scores[a], null_scores[a], level) for a in member_p}
    per_attack["closeness"] = membership_auc(ev_train["effect"], ev_holdout["effect"], level)
    tprs = {str(f): tpr_at_fpr(member_scores["combined"], null_scores["combined"], f, level) for f in FPRS}
    encoder = TableEncoder(schema).fit(train)  # as V_k scales the training records
    null_vk = kneighbors_between(encoder.transform(null), encoder.transform(train), k=k)[0].mean(axis=1)
    deciles = auc_by_decile(member_scores["combined"], null_scores["combined"], vk, null_vk, level=level)
    shares = distance_shares(train, synthetic, holdout, schema, seed=seed)
    n_verbatim = int((member_scores["copies"] > 0).sum()) if "copies" in member_scores else None
    # non-members occur verbatim too where the population repeats its records
    n_verbatim_null = int((null_scores["copies"] > 0).sum()) if "copies" in null_scores else None
    n_flagged = int(flagged.sum())
    seconds["release"] = time.perf_counter() - t
    resolution_info = copy_resolution(evidence, len(train), fdr)
    isolated = resolution_info["copies_to_flag_isolated"]
    small = isolated is None or isolated > max(1, SMALL_HOLDOUT * len(train))
    if not resolution_info["extrapolated"] and small and not check["shift"]:
        # no tail model and a floor too coarse for a handful of copies: "none flagged" would read as "none copied"
        failed = bool(evidence["warnings"])  # a tail failed its check (tail_miscalibrated says which)
        notes.append(
            {
                "code": "holdout_small",
                "message": f"with {len(holdout)} holdout records no p-value is below {resolution_info['p_floor']:.2g} "
                + ("(the tail model failed its check: tail_miscalibrated)" if failed else "(too few for a tail model)")
                + ", so even copies of the most isolated training record are flagged only "
                + (f"once {isolated:,} of them are released" if isolated is not None else "never")
                + "; an unflagged record is not shown safe"
                + (
                    f": give a larger holdout (a few thousand records, as many as the {len(train):,} training "
                    "records if they can be spared)"
                    if len(holdout) < len(train)
                    else ""
                ),
            }
        )
    if check["shift"]:  # the sentence is about a trusted holdout; this one flags nothing
        resolution_info["note"] = (
            "No record is flagged while the holdout is not a sample of the training data's population. With one "
            "that is: " + resolution_info["note"][0].lower() + resolution_info["note"][1:]
        )
    summary = {
        "vrlib_version": vrlib.__version__,
        "seed": int(seed),
        "settings": {
            "attacks": list(member_p.columns),
            "merged_attacks": use,
            "combine": combine,
            "fdr": fdr,
            "k": k,
            "resolution": resolution,
            "tolerant": bool(tolerant),
            "assign": bool(assign),
            "level": level,
            "max_density_rows": max_density_rows,
            "logan_epochs": logan_epochs,
            "show_values": show_values,
            "n_train": len(train),
            "n_synthetic": len(synthetic),
            "n_holdout": len(holdout),
            "n_reference": len(reference),
            "n_null": len(null),
        },
        "warnings": notes,
        "holdout_check": check,
        "n_holdout_in_train": info["n_holdout_in_train"],
        "n_train_repeated": info["n_train_repeated"],
        "unseen_categories": info["unseen_categories"],
        "respelled_categories": info["respelled_categories"],
        "membership_auc": auc,
        "membership_auc_ci": [auc["ci_low"], auc["ci_high"]],
        "attack_auc": per_attack,
        "tpr_at_fpr": tprs,
        "n_flagged": n_flagged,
        "flagged_share": n_flagged / len(train),
        "flag_withheld": bool(check["shift"]),
        "n_flagged_if_holdout_trusted": n_flagged_unchecked,
        "n_verbatim": n_verbatim,
        "n_verbatim_copies": int(member_scores["copies"].sum()) if "copies" in member_scores else None,
        "n_verbatim_null": n_verbatim_null,
        "verbatim_excess": None
        if n_verbatim is None
        else verbatim_excess(n_verbatim, len(train), n_verbatim_null, len(null)),
        "at_risk": records.loc[records["flagged"], "index"].astype(int).tolist(),
        "copy_evidence": {
            "views": {
                v: {key: val for key, val in d.items() if key not in ("tail", "neighbourhood", "copy_score")}
                for v, d in evidence["views"].items()
            },
            "n_holdout_scored": len(holdout),
        },
        "flag_resolution": resolution_info,
        "auc_by_vk_decile": deciles.to_dict(orient="records"),
        "distance_shares": shares,
    }
    summary["disagreements"] = (
        []
        if check["shift"]
        else disagreements(
            shares,
            n_verbatim or 0,
            n_flagged,
            auc,
            fdr,
            len(train),
            n_verbatim_null,
            len(null),
            holdout_check=check if check["ci_low"] > 0.5 else None,
        )
    )
    if wp29:
        t = time.perf_counter()
        summary["wp29"] = wp29_risks(
            train, synthetic, null, schema, known=known, secret=secret, n_attacks=n_wp29_attacks, seed=seed, level=level
        )
        seconds["wp29"] = time.perf_counter() - t
    else:
        summary["wp29"] = None
    summary["game"] = None
    if generator is not None:
        from vrlib.audit.game import play

        t = time.perf_counter()
        summary["game"] = play(
            train, holdout, schema, generator, vk, epsilon=epsilon, seed=seed, level=level, **(game_params or {})
        )
        seconds["game"] = time.perf_counter() - t
    summary["policy"] = check_policy(summary, policy) if policy is not None else None
    return AuditResult(summary, records, deciles, member_scores, null_scores, seconds)
