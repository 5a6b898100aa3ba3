"""``vrlib audit``: a custodian's privacy report on their own synthetic release, per record and calibrated.

Given the training records, the release made from them and a holdout of records that
were not used for training, the audit says which training records are at risk and
how sure it is.  One idea per module:

* :mod:`~vrlib.audit.inputs` reads and checks the three tables;
* :mod:`~vrlib.audit.holdout` checks that the holdout is from the training data's population;
* :mod:`~vrlib.audit.evidence` gives each record's copy evidence (Gower closeness against every
  holdout record, with a checked tail model), which flags and ranks;
* :mod:`~vrlib.audit.scores` scores every record with release-only membership attacks;
* :mod:`~vrlib.audit.pvalues` turns scores into p-values against known non-members and flags
  records at a false-discovery rate;
* :mod:`~vrlib.audit.oracle` bounds what any test calibrated on the holdout could flag among given
  records (the validation benchmark's *best possible*);
* :mod:`~vrlib.audit.records` builds ``records.csv``;
* :mod:`~vrlib.audit.release` gives the release-level figures with intervals;
* :mod:`~vrlib.audit.wp29` measures singling out, linkability and inference;
* :mod:`~vrlib.audit.game` plays the optional model-seeded game (``--generator``);
* :mod:`~vrlib.audit.policy` turns thresholds into a verdict;
* :mod:`~vrlib.audit.report` writes ``report.html``;
* :mod:`~vrlib.audit.pipeline` runs it all: :func:`audit`.

The module itself is callable: ``vrlib.audit(train, synthetic, holdout, schema)`` is
:func:`vrlib.audit.pipeline.audit`.
"""

import importlib
import sys
import types

__all__ = ["audit", "AuditResult", "read_tables", "check_tables"]

_LAZY = {"audit": "pipeline", "AuditResult": "pipeline", "read_tables": "inputs", "check_tables": "inputs"}


class _CallableModule(types.ModuleType):
    """The package, callable as :func:`audit`; its names are imported on first use (the CLI stays fast)."""

    def __call__(self, *args, **kwargs):
        return self.audit(*args, **kwargs)

    def __getattr__(self, name):
        if name in _LAZY:
            return getattr(importlib.import_module(f"vrlib.audit.{_LAZY[name]}"), name)
        raise AttributeError(f"module 'vrlib.audit' has no attribute {name!r}")


sys.modules[__name__].__class__ = _CallableModule
