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
