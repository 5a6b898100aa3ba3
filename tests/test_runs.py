"""The measured run times each notebook shows: read from docs/run_times.csv, every number in it from docs/runs.md."""

import json
import re

import pytest

from vrlib import runs
from vrlib.errors import VrlibError

from conftest import PROJECT_ROOT

NUMBER = re.compile(r"\d[\d,.]*\d|\d")


def test_every_number_in_the_table_is_in_runs_md():
    """The table only restates docs/runs.md: a number typed into it alone would fail here."""
    text = (PROJECT_ROOT / "docs" / "runs.md").read_text()
    df = runs.read_times()
    for _, row in df.iterrows():
        for field in ("time", "how"):
            for number in NUMBER.findall(row[field]):
                assert number in text, f"{row['notebook']} {row['profile']}: {number} ({field}) is not in docs/runs.md"
        if row["commit"]:
            assert f"`{row['commit']}`" in text


def test_every_notebook_has_a_quick_time():
    numbers = sorted(p.name[:2] for p in (PROJECT_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for number in numbers:
        assert runs.times(number).loc["quick", "time"] != "not measured", number


def test_times_picks_own_rows_then_all_together(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text(
        "notebook,profile,time,commit,how\n*,smoke,10 s,,all\n05,quick,351 s,abc1234,idle\n05,smoke,3 s,,alone\n"
    )
    five = runs.times("05_domias", table)
    assert list(five.index) == ["smoke", "quick", "paper"]
    assert five.loc["smoke", "time"] == "3 s"  # its own row beats the all-together one
    assert five.loc["quick", "measured at"] == "abc1234"
    assert five.loc["paper", "time"] == "not measured"
    assert runs.times("06", table).loc["smoke", "time"] == "10 s for every notebook together"


def test_bad_tables_and_names_are_explained(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("notebook,profile,time,commit,how\n05,fast,1 s,,x\n")
    with pytest.raises(VrlibError, match=r"unknown profile\(s\) \['fast'\]"):
        runs.times("05", table)
    table.write_text("notebook,time\n05,1 s\n")
    with pytest.raises(VrlibError, match="expected"):
        runs.times("05", table)
    with pytest.raises(VrlibError, match="no table of measured run times"):
        runs.times("05", tmp_path / "missing.csv")
    with pytest.raises(VrlibError, match="two-digit number"):
        runs.times("domias")


def test_each_notebook_shows_its_times_after_its_parameters():
    """First thing after the parameters and their check (papermill's parameters cell stays the first code cell)."""
    for path in sorted((PROJECT_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        assert cells[0]["cell_type"] == "markdown" and cells[0]["source"][0].startswith("#"), path.name
        assert "parameters" in cells[1]["metadata"].get("tags", []), path.name
        code = "".join(cells[3]["source"])
        assert cells[3]["cell_type"] == "code" and f'times("{path.name[:2]}")' in code, path.name
        assert "the README" not in "".join(cells[0]["source"]), path.name  # run times live in docs/runs.md
