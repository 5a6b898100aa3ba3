"""The committed executed notebooks are the runs that wrote the committed outputs.

Each executed copy under ``notebooks/executed/<profile>/`` records the commit(s) it ran at
(``metadata.vrlib.commits``). Every table its notebook has in ``figures/<profile>/manifest.json``
must come from one of those commits, and every figure too, or (when the figure was drawn again
from the committed tables by ``scripts/redraw_figures.py``) the tables it was drawn from: an executed
copy from another run shows numbers the committed tables do not have.
"""

from __future__ import annotations

import json

import pytest

from conftest import PROJECT_ROOT

PROFILES = ("paper", "quick")


def _short(commit) -> str:
    return str(commit)[:7]


def stale_outputs(root, profile: str) -> list[str]:
    """``notebook: output (commit)`` for every manifest entry that no executed copy of its notebook ran at."""
    manifest_path = root / "figures" / profile / "manifest.json"
    if not manifest_path.exists():
        return []
    manifest = json.loads(manifest_path.read_text())
    wrong = []
    for path in sorted((root / "notebooks" / "executed" / profile).glob("*.ipynb")):
        meta = json.loads(path.read_text()).get("metadata", {}).get("vrlib", {})
        # "reproduced": commits of outputs the run wrote again byte for byte (their manifest entries kept)
        ran = {_short(c) for c in (*meta.get("commits", []), *meta.get("reproduced", []))}
        for output, entry in manifest.items():
            if not isinstance(entry, dict) or entry.get("notebook") != path.stem:
                continue
            drawn = entry.get("drawn_from", {}).get("tables", {})
            commits = {_short(t.get("commit")) for t in drawn.values()} if drawn else {_short(entry.get("commit"))}
            if not commits <= ran:
                wrong.append(f"{path.stem}: {output} ({', '.join(sorted(commits - ran))}; the copy ran at "
                             f"{', '.join(sorted(ran)) or 'no recorded commit'})")  # fmt: skip
    return wrong


@pytest.mark.parametrize("profile", PROFILES)
def test_executed_copies_ran_at_the_commits_of_the_committed_outputs(profile):
    assert stale_outputs(PROJECT_ROOT, profile) == []


def test_a_copy_from_another_run_is_caught(tmp_path):
    nb = {"cells": [], "metadata": {"vrlib": {"commits": ["aaaaaaa1111"]}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "notebooks" / "executed" / "quick").mkdir(parents=True)
    (tmp_path / "notebooks" / "executed" / "quick" / "05_domias.ipynb").write_text(json.dumps(nb))
    (tmp_path / "figures" / "quick").mkdir(parents=True)
    manifest = {
        "tables/domias_fig3a.csv": {"notebook": "05_domias", "commit": "aaaaaaa1111"},
        "domias_fig3b.png": {"notebook": "05_domias", "commit": "ccccccc",
                             "drawn_from": {"tables": {"tables/domias_fig3b.csv": {"commit": "aaaaaaa"}}}},
        "other.png": {"notebook": "06_lost_model_seeded", "commit": "ddddddd"},
    }  # fmt: skip
    path = tmp_path / "figures" / "quick" / "manifest.json"
    path.write_text(json.dumps(manifest))
    assert stale_outputs(tmp_path, "quick") == []  # a redrawn figure is judged by the tables it was drawn from
    manifest["tables/domias_fig4.csv"] = {"notebook": "05_domias", "commit": "bbbbbbb2222"}
    path.write_text(json.dumps(manifest))
    assert stale_outputs(tmp_path, "quick") == ["05_domias: tables/domias_fig4.csv (bbbbbbb; the copy ran at aaaaaaa)"]
