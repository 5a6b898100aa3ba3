"""Numbers a notebook's prose may carry: values quoted from the papers and fixed settings, never our results.

Our results reach a reader through code cells (printed, or in generated sentences),
so that re-running a notebook updates every number it states.  Markdown may quote the
papers and name fixed settings; :func:`typed_in_numbers` lists every other decimal
number in a text, and ``tests/test_notebooks.py`` requires that list to be empty for
every notebook's markdown.

To quote a new paper value or name a new setting in a notebook, register it here
(:data:`PAPER_VALUES` or :data:`SETTINGS`, with where it comes from) or, from a module
that owns the value, with :func:`allow`.  The achilles Tables 2 and 3 are read from
:mod:`vrlib.experiments.achilles`, where they live.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["allow", "allowed_numbers", "typed_in_numbers", "notebook_typed_in_numbers", "PAPER_VALUES", "SETTINGS"]

# Values the papers report, quoted in the notebooks' prose: source -> values.
PAPER_VALUES: dict[str, tuple[float, ...]] = {
    "achilles headline gaps in p.p.: 7.2 on average (Table 2), 5.2 (Table 3), up to 18.6 (Fig. 1), up to 10.89 (Fig. 2)": (
        7.2, 5.2, 18.6, 10.89),
    "achilles §7: Census std of distance vs log-likelihood (Synthpop, then BayNet) and the factor": (
        0.021, 0.041, 0.040, 0.090, 2.0),
    "domias App. D: top-q precision at q = 20 %, mean and std in % (DOMIAS, LOGAN 0, LOGAN D1, MC, GAN-Leaks, CAL)": (
        86.2, 5.5, 51.0, 3.9, 72.6, 5.3, 74.2, 3.0, 74.9, 3.1, 57.0, 4.1),
    "domias Fig. 6: additive-noise levels, smallest and largest": (0.7, 3.9),
    "domias Table 3: BNAF learning rate": (0.01,),
    "lost abstract: threshold t = 0.8, miss rates 0.73–0.94, RMSD 0.04–0.11, one record 0.5–0.8 vs 0.62": (
        0.8, 0.73, 0.94, 0.04, 0.11, 0.62),
    "lost Props. 1–2: Hoeffding half-width at N = 200 games, rho = 0.05": (0.096,),
    "mca Table 3: training records unique, and with frequency <= 3 (%)": (79.39, 86.07),
}  # fmt: skip

# Fixed settings and reference points named in prose (not results): source -> values.
SETTINGS: dict[str, tuple[float, ...]] = {
    "AUC of a guess (chance level)": (0.5,),
    "domias: top-q precision compared at q = 0.2": (0.2,),
    "domias: one-hot jitter std and BNAF gradient clipping": (0.1,),
}

_EXTRA: dict[str, tuple[float, ...]] = {}

# A decimal number: digits, a point, digits; not part of a word, a version or a longer number,
# nor a section (§4.2) or an arXiv identifier.
_DECIMAL = re.compile(r"(?<![\w.])(?<!§)(?<!arXiv )\d+\.\d+(?![\w.]*\d)")


def allow(source: str, *values: float) -> None:
    """Let notebook prose carry ``values`` (quoted from ``source``, e.g. a paper's table)."""
    _EXTRA[source] = tuple(float(v) for v in values)


def allowed_numbers() -> dict[float, str]:
    """Every number prose may carry -> where it comes from."""
    from vrlib.experiments.achilles import paper_table

    allowed: dict[float, str] = {}
    for attack, name in (("query", "achilles Table 2"), ("attention", "achilles Table 3")):
        table = paper_table(attack)
        for v in [*table.paper_mean, *table.paper_std]:
            allowed.setdefault(round(float(v), 6), name)
    for registry in (PAPER_VALUES, SETTINGS, _EXTRA):
        for source, values in registry.items():
            for v in values:
                allowed.setdefault(round(float(v), 6), source)
    return allowed


def typed_in_numbers(text: str) -> list[str]:
    """The decimal numbers in ``text`` that are neither a registered paper value nor a setting."""
    allowed = allowed_numbers()
    return [m.group() for m in _DECIMAL.finditer(text) if round(float(m.group()), 6) not in allowed]


def notebook_typed_in_numbers(path) -> list[tuple[int, str, str]]:
    """``(cell index, number, context)`` for each typed-in number in a notebook's markdown cells."""
    nb = json.loads(Path(path).read_text())
    allowed = allowed_numbers()
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        for m in _DECIMAL.finditer(text):
            if round(float(m.group()), 6) not in allowed:
                found.append((i, m.group(), text[max(0, m.start() - 40) : m.end() + 20].replace("\n", " ")))
    return found
