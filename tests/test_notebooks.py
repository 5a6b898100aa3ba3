"""Static checks of the committed notebooks (their smoke runs are in run_tests.sh, through run_all.sh)."""

import ast
import json

import pytest

from conftest import PROJECT_ROOT

NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
REQUIRED = {"profile", "seed", "figures_dir", "tables_dir"}


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell.get("outputs"), f"{path.name} has outputs: strip them before committing"
            assert cell.get("execution_count") is None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_cell(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", []), "the first code cell must be tagged 'parameters'"
    source = "".join(first["source"])
    names = set()
    for node in ast.parse(source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, "parameters are plain assignments"
        ast.literal_eval(node.value)  # literals only
        names.add(node.targets[0].id)
    assert REQUIRED <= names, f"missing parameters {REQUIRED - names}"
    for line in source.splitlines():
        assert "# " in line, f"parameter without a '# help' comment: {line!r}"
    assert ast.literal_eval(source.split("profile =")[1].split("#")[0].strip()) == "quick"


def test_typed_in_numbers_are_caught(monkeypatch):
    from vrlib import prose
    from vrlib.prose import allow, typed_in_numbers

    monkeypatch.setattr(prose, "_EXTRA", {})  # what this test allows stays in this test

    text = "Paper: 0.742 ± 0.033 and 0.5 is a guess; ours was 0.475 (2.9 standard errors), version 1.2.3, 10,000 rows."
    assert typed_in_numbers(text) == ["0.475", "2.9"]
    allow("a test's paper", 0.475)
    assert typed_in_numbers(text) == ["2.9"]
    # references are not results: a section number and an arXiv identifier pass, a result beside them does not
    assert typed_in_numbers("see §4.2 and arXiv 2405.15423; ours 0.31") == ["0.31"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_typed_in_results_in_markdown(path):
    """Numbers of ours come from code cells; markdown carries only paper values and settings (vrlib.prose)."""
    from vrlib.prose import notebook_typed_in_numbers

    found = notebook_typed_in_numbers(path)
    assert not found, (
        f"{path.name}: decimal numbers in markdown that are neither a paper value nor a setting registered in "
        f"vrlib.prose: {found}; print results from a code cell, or register a quoted value"
    )
