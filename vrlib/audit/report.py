"""``report.html``: the audit for people, in one self-contained file (figures embedded as base64 PNG).

The first screen says in plain words how many training records are at risk and which
(by their row in the training file; their values only with ``show_values``), then the
release-level figures with their intervals, the plots (risk against V_k, score
distributions of members and holdout, ROC at low false-positive rates), the WP29
risks with the threat model, the distance shares beside the attacks, the optional
game and policy verdict, and the settings, vrlib version and seed.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

__all__ = ["render_html", "figures"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.verdict{font-size:1.25em;padding:.8em 1em;border-radius:6px;background:#fff4e5;border:1px solid #f0b060}
.verdict.ok{background:#eef8ee;border-color:#8c8}
table{border-collapse:collapse;margin:.6em 0} td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4} td:first-child,th:first-child{text-align:left}
img{max-width:100%;height:auto;display:block;margin:.6em 0} .small{color:#666;font-size:.9em}
"""


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def figures(result) -> dict[str, str]:
    """The report's three figures as base64 PNG: ``risk_vs_vk``, ``scores``, ``roc``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    rec = result.records
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    axes[0].scatter(
        rec["vk_rank"], -np.log10(rec["p_value"]), s=4, alpha=0.4, c=np.where(rec["flagged"], "#d62728", "#1f77b4")
    )
    axes[0].invert_xaxis()
    axes[0].set_xscale("log")
    axes[0].set_xlabel("V_k rank (1 = most isolated record)")
    axes[0].set_ylabel("-log10 copy-evidence p-value")
    axes[0].set_title("Per-record risk (red: flagged)")
    dec = result.deciles
    axes[1].errorbar(
        dec["decile"], dec["auc"], yerr=[dec["auc"] - dec["ci_low"], dec["ci_high"] - dec["auc"]], fmt="o-", capsize=3
    )
    axes[1].axhline(0.5, color="grey", lw=1, ls="--")
    axes[1].set_xlabel("V_k decile (10 = most isolated)")
    axes[1].set_ylabel("membership AUC")
    axes[1].set_title("Risk by V_k decile")
    out["risk_vs_vk"] = _png(fig)

    attacks = [c for c in result.member_scores.columns if c != "copies"]
    fig, axes = plt.subplots(1, len(attacks), figsize=(3.1 * len(attacks), 2.9), squeeze=False)
    for ax, a in zip(axes[0], attacks):
        m, n = result.member_scores[a].to_numpy(), result.null_scores[a].to_numpy()
        lo, hi = np.percentile(np.r_[m, n], [0.5, 99.5])
        bins = np.linspace(lo, hi if hi > lo else lo + 1, 40)
        ax.hist(np.clip(m, bins[0], bins[-1]), bins=bins, density=True, alpha=0.5, label="training (members)")
        ax.hist(np.clip(n, bins[0], bins[-1]), bins=bins, density=True, alpha=0.5, label="holdout (non-members)")
        ax.set_title(a)
        ax.set_yticks([])
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Score distributions", y=1.02)
    out["scores"] = _png(fig)

    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    for a in result.member_scores.columns:
        m, n = result.member_scores[a].to_numpy(), np.sort(result.null_scores[a].to_numpy())[::-1]
        thresholds = n[: max(2, int(0.2 * len(n)))]
        fpr = (np.arange(len(thresholds)) + 1) / len(n)
        tpr = 1 - np.searchsorted(np.sort(m), thresholds, side="right") / len(m)
        ax.plot(fpr, tpr, label=a, lw=2 if a == "combined" else 1)
    ax.plot([1e-4, 1], [1e-4, 1], color="grey", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1 / len(result.null_scores), 0.2)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.set_title("ROC at low false-positive rates")
    ax.legend(fontsize=7)
    out["roc"] = _png(fig)
    return out


def _e(x) -> str:
    return html.escape(str(x))


def _ci(d: dict, digits: int = 3) -> str:
    value = d.get("auc", d.get("tpr", d.get("risk", d.get("rate"))))
    return f"{value:.{digits}f} [{d['ci_low']:.{digits}f}, {d['ci_high']:.{digits}f}]"


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, escape=True, float_format=lambda v: f"{v:.4g}")


def render_html(result) -> str:
    """The report as one HTML string (no external resource)."""
    s = result.summary
    st = s["settings"]
    level = f"{st['level']:.0%}"
    n_train, n_flagged = st["n_train"], s["n_flagged"]
    rec = result.records
    flagged = rec[rec["flagged"]]
    shown = flagged.head(20)
    which = ", ".join(str(int(i)) for i in shown["index"])
    more = f" and {len(flagged) - len(shown)} more (see records.csv)" if len(flagged) > len(shown) else ""
    verbatim = s["n_verbatim"]
    null_verbatim, n_null = s.get("n_verbatim_null"), st.get("n_null", 0)
    beside = (
        f" (against {null_verbatim:,} of the {n_null:,} holdout records, which the generator never saw"
        + (
            ""
            if s.get("verbatim_excess")
            else "; not significantly more often, so verbatim occurrence alone does not show copying here"
        )
        + ")"
        if verbatim and null_verbatim is not None
        else ""
    )
    shifted = bool(s.get("flag_withheld"))
    auc = s["membership_auc"]
    if shifted:
        hc = s["holdout_check"]
        headline = (
            "This audit cannot tell whether records leak: the holdout is not a sample of the training data's "
            f"population (a classifier tells them apart with AUC {_ci(hc)}), so no record is flagged and the "
            "membership figures below measure that difference, not a leak. Give a holdout split from the same "
            "data before training."
        )
    elif n_flagged:
        headline = (
            f"{n_flagged:,} of the {n_train:,} training records are at risk in this release: the release holds "
            f"copies or near-copies of them closer than non-members get, at a {st['fdr']:.0%} false-discovery "
            f"rate. They are rows {which}{more} of the training file (0-based)."
        )
    else:
        headline = (
            f"No training record is flagged as at risk at a {st['fdr']:.0%} false-discovery rate "
            f"(of {n_train:,} records)"
            + (f", but {verbatim:,} of them occur verbatim in the release{beside}." if verbatim else ".")
        )
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>vrlib audit: privacy report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Privacy audit of a synthetic release</h1>",
        f"<p class='verdict{' ok' if not n_flagged and not verbatim and not shifted else ''}' id='verdict'>"
        f"{_e(headline)}</p>",
        "<p>",
    ]
    if verbatim is not None:
        parts.append(_e(f"{verbatim:,} training records occur verbatim in the release{beside}. "))
    if shifted:
        parts.append(
            _e(f"Training vs holdout AUC of the attacks: {_ci(auc)} ({level} interval): a population difference.")
        )
    else:
        parts.append(
            _e(f"Membership AUC (training vs holdout records): {_ci(auc)} ({level} interval; 0.5 = no signal).")
        )
    parts.append("</p>")
    parts.append(f"<p id='resolution'>{_e(s['flag_resolution']['note'])}</p>")
    if s.get("warnings"):
        parts.append(
            "<ul id='warnings'>"
            + "".join(f"<li><b>{_e(w['code'])}</b>: {_e(w['message'])}</li>" for w in s["warnings"])
            + "</ul>"
        )
    for sentence in s["disagreements"]:
        parts.append(f"<p><b>{_e(sentence)}</b></p>")
    if s.get("policy"):
        pol = s["policy"]
        verdict = "passes" if pol["passed"] else "fails"
        parts.append(f"<p id='policy'>The release {verdict} the policy.</p>")
        if pol["violations"]:
            parts.append("<ul>" + "".join(f"<li>{_e(v)}</li>" for v in pol["violations"]) + "</ul>")
    top = rec.head(20).copy()
    keep = [
        c
        for c in top.columns
        if c in ("index", "risk_rank", "vk_rank", "copies", "effect", "p_value", "q_value", "flagged")
        or c.startswith("value_")
    ]
    parts.append("<h2>The records most at risk</h2>")
    if not st["show_values"]:
        parts.append(
            "<p class='small'>Record values are hidden (the report is itself sensitive); "
            "rerun with --show-values to include them.</p>"
        )
    parts.append(_table(top[keep]))
    figs = figures(result)
    parts.append("<h2>Release-level membership risk</h2>")
    rows = [("combined", _ci(auc))] + [(a, _ci(d)) for a, d in s["attack_auc"].items()]
    parts.append(_table(pd.DataFrame(rows, columns=["score", f"AUC [{level} DeLong interval]"])))
    rows = [(f"{float(f):.1%}", _ci(d), d["true_positives"], d["false_positives"]) for f, d in s["tpr_at_fpr"].items()]
    parts.append(
        _table(
            pd.DataFrame(
                rows,
                columns=[
                    "FPR at most",
                    f"TPR [{level} interval, threshold noise included]",
                    "members called",
                    "holdout records called",
                ],
            )
        )
    )
    parts.append(f"<img alt='risk against V_k' src='data:image/png;base64,{figs['risk_vs_vk']}'>")
    parts.append(f"<img alt='score distributions' src='data:image/png;base64,{figs['scores']}'>")
    parts.append(f"<img alt='ROC at low FPR' src='data:image/png;base64,{figs['roc']}'>")
    parts.append("<h2>Membership AUC by V_k decile</h2>")
    parts.append(_table(result.deciles))
    if s.get("wp29"):
        w = s["wp29"]
        parts.append("<h2>Singling out, linkability, inference (WP29)</h2>")
        tm = w["threat_model"]
        parts.append(
            _e(
                f"Threat model: the attacker knows {', '.join(tm['known'])}; the secret is {tm['secret']} "
                "(change with --known and --secret). Risk = excess success on training records over "
                "holdout records, scaled to [0, 1]."
            )
        )
        rows = [
            (name, _ci(d), f"{d['main']['rate']:.3f}", f"{d['control']['rate']:.3f}")
            for name in ("singling_out", "linkability", "inference")
            if (d := w.get(name))
        ]
        parts.append(
            _table(
                pd.DataFrame(rows, columns=["risk", f"value [{level}]", "success on training", "success on holdout"])
            )
        )
    d = s["distance_shares"]
    parts.append("<h2>Distance shares (shown beside the attacks, not instead of them)</h2>")
    parts.append(
        _e(
            f"DCR share (released records nearer a training than a holdout record): {d['dcr_share']:.3f}; "
            f"NNDR share: {d['nndr_share']:.3f}. Both are 0.5 for a release independent of its training "
            "data. Distance shares can call a release safe that membership attacks break."
        )
    )
    if s.get("game"):
        g = s["game"]
        parts.append("<h2>Model-seeded game</h2>")
        parts.append(_e(g["sentence"]))
        parts.append(_table(pd.DataFrame(g["groups"])))
    parts.append("<h2>Settings</h2><p class='small'>")
    parts.append(_e(f"vrlib {s['vrlib_version']}, seed {s['seed']}; " + "; ".join(f"{k} = {v}" for k, v in st.items())))
    if result.seconds:
        parts.append(_e("; wall time: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())))
    parts.append("</p></body></html>")
    return "\n".join(parts)
