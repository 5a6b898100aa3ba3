"""A custodian's release policy: thresholds on the audit's figures, turned into a verdict (and an exit status).

A policy is a JSON object whose keys are among :data:`RULES`; each value is the
largest figure the custodian accepts, e.g.::

    {"max_membership_auc": 0.55, "max_flagged": 0, "max_verbatim": 10}

``max_membership_auc_ci_low`` bounds the lower end of the AUC's interval instead (a
release fails only when the evidence is clear).  The command line exits with
:data:`EXIT_VIOLATED` when a rule is broken.
"""

from __future__ import annotations

import json
from pathlib import Path

from vrlib.errors import VrlibError
from vrlib.params import check_number

__all__ = ["RULES", "EXIT_VIOLATED", "load_policy", "check_policy"]

EXIT_VIOLATED = 3

RULES = {
    "max_membership_auc": ("membership AUC", lambda s: s["membership_auc"]["auc"]),
    "max_membership_auc_ci_low": (
        "lower end of the membership AUC's interval",
        lambda s: s["membership_auc"]["ci_low"],
    ),
    "max_tpr_at_fpr_0.001": ("TPR at 0.1 % FPR", lambda s: s["tpr_at_fpr"]["0.001"]["tpr"]),
    "max_tpr_at_fpr_0.01": ("TPR at 1 % FPR", lambda s: s["tpr_at_fpr"]["0.01"]["tpr"]),
    "max_flagged": ("records flagged at the stated false-discovery rate", lambda s: s["n_flagged"]),
    "max_verbatim": ("training records copied verbatim", lambda s: s["n_verbatim"]),
    "max_singling_out": ("singling-out risk", lambda s: (s.get("wp29") or {}).get("singling_out", {}).get("risk")),
    "max_linkability": ("linkability risk", lambda s: ((s.get("wp29") or {}).get("linkability") or {}).get("risk")),
    "max_inference": ("inference risk", lambda s: (s.get("wp29") or {}).get("inference", {}).get("risk")),
    "max_empirical_epsilon": (
        "empirical ε lower bound of the game",
        lambda s: (s.get("game") or {}).get("epsilon_lower"),
    ),
}


def load_policy(source) -> dict:
    """A policy from a JSON file (path) or a mapping, checked: known keys, finite numbers.

    Raises
    ------
    VrlibError
        An unreadable file, unknown rules or non-numeric thresholds.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise VrlibError(f"policy file {str(path)!r} not found")
        try:
            policy = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise VrlibError(f"policy file {str(path)!r} is not valid JSON: {exc}") from None
    else:
        policy = source
    if not isinstance(policy, dict) or not policy:
        raise VrlibError(f"a policy is a non-empty JSON object of thresholds, with keys among {sorted(RULES)}")
    unknown = sorted(set(policy) - set(RULES))
    if unknown:
        raise VrlibError(f"unknown policy rule(s) {unknown}; choose among {sorted(RULES)}")
    for key, value in policy.items():
        check_number(f"policy rule {key!r}", value, want="a finite number")
    return dict(policy)


def check_policy(summary: dict, policy: dict) -> dict:
    """The verdict of ``policy`` on an audit's ``summary``.

    Returns
    -------
    dict
        ``passed`` (bool), ``violations`` (a sentence each), ``skipped`` (rules whose
        figure the audit did not measure, e.g. the game without ``--generator``) and the
        ``policy`` itself.
    """
    policy = load_policy(policy)
    violations, skipped = [], []
    for key, limit in sorted(policy.items()):
        what, get = RULES[key]
        value = get(summary)
        if value is None:
            skipped.append(key)
        elif value > limit:
            violations.append(f"{what} is {value:.4g}, above the policy's {key} = {limit:g}")
    return {"passed": not violations, "violations": violations, "skipped": skipped, "policy": policy}
