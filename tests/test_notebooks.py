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


# --------------------------------------------------------------------------- tables built but never shown

# A cell shows its last expression only when that expression is the cell's last statement: a table built as the last
# line inside an ``if`` (or ``for``, ``with``, ``try``) block is computed and thrown away, so a reader of the executed
# copy never sees it (notebook 05's App. D table of ours beside the paper's at q = 0.2 was so). Calls that show or
# write something themselves are not tables left unshown.
_SHOWN_BY_CALL = ("print", "display", "savefig", "write_table", "legend", "tight_layout", "set", "axhline", "axvline",
                  "axis", "show", "close", "append", "extend", "update", "run_sitting")  # fmt: skip
_COMPOUND = ("If", "For", "While", "With", "Try")

# Cells known to leave a table unshown, until their notebook is run again with ``display(...)`` around it and its
# executed copy remade (the list must shrink: a listed cell that shows its table fails the test).
KNOWN_UNSHOWN: set[tuple[str, str]] = set()


def unshown_expressions(source: str) -> list[str]:
    """The bare expressions a code cell computes as the last statement of a block that ends the cell (so IPython
    does not display them), each as its source's first 40 characters with whitespace collapsed; calls that print,
    display or write are left out."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return []
    found = []

    def last_of(block):
        if not block:
            return
        node = block[-1]
        if type(node).__name__ in _COMPOUND:
            for part in (getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                last_of(part)
            for handler in getattr(node, "handlers", []):
                last_of(handler.body)
        elif isinstance(node, ast.Expr):
            value = node.value
            called = ast.unparse(value.func).rsplit(".", 1)[-1] if isinstance(value, ast.Call) else None
            if called not in _SHOWN_BY_CALL and not isinstance(value, ast.Constant):
                found.append(" ".join(ast.get_source_segment(source, node).split())[:40])

    if body and type(body[-1]).__name__ in _COMPOUND:
        last_of([body[-1]])
    return found


def test_unshown_tables_are_found():
    # must find: a table (a call's result, a name, a method chain) as the last line of a block that ends the cell
    assert unshown_expressions("if x:\n    t = f()\n    pd.DataFrame({'a': [1]})") == ["pd.DataFrame({'a': [1]})"]
    assert unshown_expressions("for g in gs:\n    table") == ["table"]
    assert unshown_expressions("if a:\n    pass\nelse:\n    t.round(3)") == ["t.round(3)"]
    assert unshown_expressions("with ctx:\n    if b:\n        t.pivot(index='a')") == ["t.pivot(index='a')"]
    # must not find: the expression is the cell's own last statement, or the block's last line shows or writes it
    assert unshown_expressions("if x:\n    t = f()\nt.round(3)") == []
    assert unshown_expressions("if x:\n    display(t.round(3))") == []
    assert unshown_expressions("if x:\n    print(t)\n    reporter.savefig(fig, 'a')") == []
    assert unshown_expressions("if x:\n    t = f()") == []
    assert unshown_expressions("if x:\n    'a docstring-like constant'") == []


def test_no_table_is_built_and_left_unshown():
    found = set()
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                found |= {(path.stem, e) for e in unshown_expressions("".join(cell["source"]))}
    assert found - KNOWN_UNSHOWN == set(), "tables a cell builds but never shows (wrap them in display(...))"
    assert KNOWN_UNSHOWN - found == set(), "listed as unshown but shown now (remove from KNOWN_UNSHOWN)"
