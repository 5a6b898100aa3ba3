"""The reproduction scorecard: every quantitative claim of the four papers, ours beside it, and a verdict.

The claims register is one module per paper (:mod:`~vrlib.scorecard.achilles`,
:mod:`~vrlib.scorecard.domias`, :mod:`~vrlib.scorecard.lost`, :mod:`~vrlib.scorecard.mca`): each
claim's exact words and place, the paper's value, and the rule that judges it on the committed
tables, or why it is not reproduced here. The rules share one vocabulary
(:mod:`~vrlib.scorecard.rules`: the three-valued checks, the verdicts, the noise comparisons);
:mod:`~vrlib.scorecard.headline` computes the achilles headline numbers (also for notebooks 01 and
02); :mod:`~vrlib.scorecard.report` judges every claim and writes the pages.

``python -m vrlib.scorecard`` (or ``vrlib scorecard``) writes ``figures/SCORECARD.md`` and
``figures/PROVENANCE.md`` and refreshes the summary block of ``README.md``; ``--check`` only
compares and exits non-zero on a difference.
"""

from vrlib.scorecard.domias import paper_domias
from vrlib.scorecard.lost import LOST_MISS, LOST_RMSD
from vrlib.scorecard.report import (
    CLAIMS,
    NOTEBOOKS,
    PAPERS,
    PROFILES,
    README_BEGIN,
    README_END,
    Links,
    Row,
    coverage_lines,
    evaluate,
    main,
    outputs,
    provenance_markdown,
    readme_with_summary,
    scorecard_markdown,
    summary_lines,
    verdicts,
    write,
)
from vrlib.scorecard.rules import VERDICTS, Claim, Outcome, verdict

__all__ = [
    "Claim",
    "Outcome",
    "Row",
    "CLAIMS",
    "PAPERS",
    "NOTEBOOKS",
    "PROFILES",
    "VERDICTS",
    "LOST_RMSD",
    "LOST_MISS",
    "README_BEGIN",
    "README_END",
    "Links",
    "verdict",
    "paper_domias",
    "evaluate",
    "verdicts",
    "scorecard_markdown",
    "summary_lines",
    "coverage_lines",
    "provenance_markdown",
    "readme_with_summary",
    "outputs",
    "write",
    "main",
]
