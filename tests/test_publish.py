"""scripts/publish_notebooks.py: what it keeps and drops of an executed notebook, on a notebook made here."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from pathlib import Path

import nbformat
import pytest

from conftest import PROJECT_ROOT

spec = importlib.util.spec_from_file_location("publish_notebooks", PROJECT_ROOT / "scripts" / "publish_notebooks.py")
publish_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(publish_notebooks)


def _png(width: int, height: int) -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def _png_width(data: str) -> int:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(data))).width


@pytest.fixture
def executed(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {
        "parameters": {"profile": "quick", "seed": 3},
        "start_time": "2026-01-02T10:00:00.000000",
        "end_time": "2026-01-02T11:00:00.000000",
        "input_path": f"{PROJECT_ROOT}/notebooks/03_x.ipynb",
        "environment_variables": {},
    }
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell(f'figures_dir = "{PROJECT_ROOT}/figures"')
    cell.metadata["papermill"] = {"duration": 1.0}
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="100%|#####| 10/10 [00:01<00:00]\n"),
        nbformat.v4.new_output("stream", name="stdout", text="step 1\rstep 2\rdone\nnext line\n"),
        nbformat.v4.new_output(
            "display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "HBox()"}
        ),
        nbformat.v4.new_output("display_data", data={"image/png": _png(2400, 300), "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", data={"image/png": _png(600, 300), "text/plain": "<Figure>"}),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), cell]
    path = tmp_path / "results" / "03_x.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    manifest = {
        "a.png": {"notebook": "03_x", "commit": "inrun111", "written": "2026-01-02T10:30:00"},
        "b.png": {"notebook": "03_x", "commit": "earlier0", "written": "2025-12-01T10:30:00"},
        "c.png": {"notebook": "04_y", "commit": "other000", "written": "2026-01-02T10:40:00"},
    }
    return path, (manifest, "figures/quick/manifest.json")


def test_publish_keeps_what_a_reader_needs(executed, tmp_path):
    path, manifest = executed
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000)
    text = out.read_text()
    nb = json.loads(text)
    banner, title, code = nb["cells"]
    assert "Profile `quick`, seed 3, run 2026-01-02; commit `inrun111`" in "".join(banner["source"])
    assert "earlier0" not in text and "other000" not in text  # only the commits of this run of this notebook
    assert "".join(title["source"]) == "# Title"
    outputs = code["outputs"]
    assert [o["output_type"] for o in outputs] == ["stream", "display_data", "display_data"]
    assert outputs[0]["name"] == "stdout" and "".join(outputs[0]["text"]) == "done\nnext line\n"
    assert _png_width(outputs[1]["data"]["image/png"]) == 1000
    assert _png_width(outputs[2]["data"]["image/png"]) == 600
    assert "widgets" not in nb["metadata"] and "papermill" not in code["metadata"]
    assert str(PROJECT_ROOT) not in text
    assert 'figures_dir = \\"figures\\"' in text
    assert nb["metadata"]["vrlib"] == {"profile": "quick", "seed": 3, "commits": ["inrun111"]}


def test_a_run_that_reproduced_every_output_names_its_own_commit(executed, tmp_path):
    # every output of 03_x written before the run and rewritten by it byte for byte (its provenance log)
    path, (manifest, shown) = executed
    manifest = {k: v for k, v in manifest.items() if k != "a.png"}
    reruns = {"b.png": {"notebook": "03_x", "commit": "thisrun2", "written": "2026-01-02T10:45:00"},
              "c.png": {"notebook": "04_y", "commit": "thisrun2", "written": "2026-01-02T10:46:00"}}  # fmt: skip
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", (manifest, shown), max_width=1000, reruns=reruns)
    nb = json.loads(out.read_text())
    banner = "".join(nb["cells"][0]["source"])
    assert "commit `thisrun2`; its outputs are byte for byte those committed at `earlier0`" in banner
    assert nb["metadata"]["vrlib"] == {
        "profile": "quick",
        "seed": 3,
        "commits": ["thisrun2"],
        "reproduced": ["earlier0"],
    }
    # without the log the run's commit is unknown: the outputs' commit, as before
    out = publish_notebooks.publish(path, tmp_path / "out2", "quick", (manifest, shown), max_width=1000)
    assert json.loads(out.read_text())["metadata"]["vrlib"]["commits"] == ["earlier0"]


def test_banner_reruns_with_the_parameters_the_run_set(executed, tmp_path):
    import shlex

    import yaml

    path, manifest = executed
    nb = nbformat.read(path, as_version=4)
    nb.metadata["papermill"]["parameters"].update(include_flow=False, sections=["fig3a", "fig5"], note="a b")
    nbformat.write(nb, path)
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000)
    banner = "".join(json.loads(out.read_text())["cells"][0]["source"])
    assert "`./run_all.sh --profile quick --only 03_` runs it with the notebook's defaults" in banner
    command = banner.split("rerun it with `")[1].split("`")[0]
    words = shlex.split(command)  # as a POSIX shell splits it
    assert words[:4] == ["mkdir", "-p", "results/quick", "&&"]
    assert words[4:7] == ["papermill", "notebooks/03_x.ipynb", "results/quick/03_x.ipynb"]
    assert words[words.index("profile") + 1] == "quick" and words[words.index("seed") + 1] == "3"
    given = {}
    for i, w in enumerate(words):
        if w == "-y":  # papermill reads each as YAML: the run's values come back with their types
            given.update(yaml.safe_load(words[i + 1]))
    assert given == {"include_flow": False, "sections": ["fig3a", "fig5"], "note": "a b"}
    # a run with only the profile and seed keeps the short command
    plain = publish_notebooks._rerun("03_x", {"profile": "quick", "seed": 0, "figures_dir": "/x"}, "quick")
    assert plain == "rerun it with `./run_all.sh --profile quick --only 03_`"


def test_publish_again_replaces_the_banner(executed, tmp_path):
    path, manifest = executed
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000)
    again = publish_notebooks.publish(out, tmp_path / "again", "quick", manifest, max_width=1000)
    cells = json.loads(again.read_text())["cells"]
    assert sum(publish_notebooks.BANNER_TAG in c["metadata"].get("tags", []) for c in cells) == 1


def test_main_says_what_to_run_when_there_is_nothing(tmp_path, capsys):
    assert publish_notebooks.main(["--profile", "paper", "--source", str(tmp_path), "--dest", str(tmp_path / "o")]) == 2
    assert "./run_all.sh --profile paper" in capsys.readouterr().err


def test_notebooks_run_in_another_checkout_name_no_path_of_it(tmp_path):
    other = tmp_path / "clone"
    source = other / "results" / "quick"
    source.mkdir(parents=True)
    (other / "figures" / "quick").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"parameters": {"profile": "quick", "seed": 0}}
    cell = nbformat.v4.new_code_cell(f'figures_dir = "{other}/figures"')
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"wrote {other}/figures/quick/a.png\n")]
    nb.cells = [cell]
    nbformat.write(nb, source / "03_x.ipynb")
    (other / "figures" / "quick" / "manifest.json").write_text("{}")
    dest = tmp_path / "out"
    assert (
        publish_notebooks.main(
            ["--source", str(source), "--dest", str(dest), "--figures", str(other / "figures" / "quick")]
        )
        == 0
    )
    text = (dest / "03_x.ipynb").read_text()
    assert str(other) not in text and str(tmp_path) not in text
    assert "from `figures/quick/manifest.json`" in text
    assert "wrote figures/quick/a.png" in text and 'figures_dir = \\"figures\\"' in text


def test_outputs_a_run_reproduced_byte_for_byte_keep_their_commit_and_the_copy_says_so():
    nb = "01_x"
    manifest = {
        "fig.png": {"notebook": nb, "commit": "old0000", "written": "2026-01-01T00:00:00"},  # kept: same bytes
        "new.csv": {"notebook": nb, "commit": "new1111", "written": "2026-02-01T10:05:00"},  # changed by the run
        "other.png": {"notebook": "02_y", "commit": "zzz2222", "written": "2026-01-01T00:00:00"},
    }
    reruns = {
        "fig.png": {"notebook": nb, "commit": "new1111", "written": "2026-02-01T10:04:00"},  # this run
        "other.png": {"notebook": "02_y", "commit": "new1111", "written": "2026-02-01T10:04:00"},  # another notebook
        "new.csv": {"notebook": nb, "commit": "new1111", "written": "2026-01-15T00:00:00"},  # an earlier run
    }
    start, end = "2026-02-01T10:00:00", "2026-02-01T10:10:00"
    assert publish_notebooks._commits(manifest, nb, start, end) == ["new1111"]
    assert publish_notebooks._reproduced(manifest, reruns, nb, start, end) == ["old0000"]
    assert publish_notebooks._reproduced(manifest, reruns, nb, "2026-03-01T00:00:00", "2026-03-02T00:00:00") == []


# --------------------------------------------------------------------------- the copy against its notebook's source


def _source(tmp_path, *cells) -> Path:
    """A notebook source (no outputs) with ``cells``, as ``notebooks/03_x.ipynb`` would be."""
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    path = tmp_path / "notebooks" / "03_x.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(nb, path)
    return path


def _header(out) -> str:
    return "".join(json.loads(out.read_text())["cells"][0]["source"])


def test_a_copy_identical_to_its_notebook_gets_no_note(executed, tmp_path):
    path, manifest = executed
    code = 'figures_dir = "figures"'  # the fixture's code cell as published (its path made relative)
    source = _source(tmp_path, nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell(code))
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000, source=source)
    assert publish_notebooks.SOURCE_NOTE not in _header(out)
    assert "Executed notebook." in _header(out)


def test_a_changed_markdown_cell_is_named_in_the_header(executed, tmp_path):
    path, manifest = executed
    code = 'figures_dir = "figures"'  # the fixture's code cell as published (its path made relative)
    source = _source(
        tmp_path, nbformat.v4.new_markdown_cell("# Title\n\nThe prose, mended."), nbformat.v4.new_code_cell(code)
    )
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000, source=source)
    header = _header(out)
    assert header.startswith("> **Executed notebook.**")
    note = header.split("\n>\n> ", 1)[1]
    assert note.startswith(publish_notebooks.SOURCE_NOTE)
    assert "1 of this copy's cells (1 markdown) differ from `notebooks/03_x.ipynb`" in note
    assert "cell 1 (markdown) changed, under “Title”" in note
    assert "code at commit `inrun111`" in note  # the run's commit (the manifest's, fixture)
    assert "rerun it with `./run_all.sh --profile quick --only 03_`" in note
    # the copy's own cells are the run's: the old prose stays, only the header speaks of the change
    cells = json.loads(out.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "# Title" and len(cells) == 3


def test_a_changed_code_cell_is_named_in_the_header(executed, tmp_path):
    path, manifest = executed
    source = _source(tmp_path, nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("figures_dir = 1"))
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000, source=source)
    note = _header(out).split("\n>\n> ", 1)[1]
    assert "1 of this copy's cells (1 code) differ" in note
    assert "cell 2 (code) changed, under “Title”" in note
    assert "markdown" not in note


def test_source_changes_on_a_hand_made_case():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    banner = md("> **Executed notebook.**", metadata={"tags": [publish_notebooks.BANNER_TAG]})
    injected = code("profile = 'paper'", metadata={"tags": ["injected-parameters"]})
    copy = {"cells": [banner, md("# A"), code("x"), injected, md("## B"), code("y"), md("z")]}
    source = {"cells": [md("# A"), code("x"), code("new"), md("## B"), code("y2"), md("z")]}
    Change = publish_notebooks.CellChange
    # copy positions count from the title (the header left out, papermill's injected cell counted: it is shown)
    assert publish_notebooks.source_changes(copy, source) == [
        Change("added", (), (3,), ("code",), ("A",)),
        Change("changed", (5,), (5,), ("code",), ("B",)),
    ]
    source["cells"] = source["cells"][:4] + [code("y")]  # y as the run had it, and the last cell gone
    assert publish_notebooks.source_changes(copy, source)[-1] == Change("removed", (6,), (), ("markdown",), ("B",))
    # a changed heading cell is under its own heading; a run over two headings is named under each
    source = {"cells": [md("# A"), code("x"), md("## B, renamed"), code("y3"), md("z")]}
    changes = publish_notebooks.source_changes(copy, source)
    assert changes == [Change("changed", (4, 5), (3, 4), ("markdown", "code"), ("B", "B"))]
    copy["cells"][4] = md("## B")
    copy["cells"].insert(5, md("## C"))
    source["cells"].insert(3, md("## C, renamed"))
    note = publish_notebooks.source_note(copy, source, "03_x", "paper")
    # copy: A x [injected] B C y z; source: A x B' C' y3 z
    assert "cell 4 (markdown) changed, under “B”; cells 5–6 (markdown, code) changed, under “C”" in note
    assert "3 of this copy's cells (2 markdown, 1 code) differ" in note
    assert "a commit not recorded" in note  # no vrlib metadata: not made up
    copy = {"cells": [banner, *source["cells"]]}
    assert publish_notebooks.source_changes(copy, source) == []
    assert publish_notebooks.source_note(copy, source, "03_x", "paper") == ""


def test_note_source_changes_edits_the_header_only_and_again_removes_it(executed, tmp_path):
    path, manifest = executed
    code = 'figures_dir = "figures"'  # the fixture's code cell as published (its path made relative)
    source = _source(tmp_path, nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell(code))
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", manifest, max_width=1000, source=source)
    before = out.read_text()
    assert publish_notebooks.note_source_changes(out.parent, source.parent, {}) == {"03_x": ""}
    assert out.read_text() == before  # nothing to say: the file is left byte for byte
    # the notebook's prose mended after the copy was published
    _source(tmp_path, nbformat.v4.new_markdown_cell("# Title, mended"), nbformat.v4.new_code_cell(code))
    redrawn = {"a.png": {"notebook": "03_x", "commit": "redraw9", "drawn_from": {"tables": {}}}}
    notes = publish_notebooks.note_source_changes(out.parent, source.parent, redrawn)
    assert "cell 1 (markdown) changed, under “Title”" in notes["03_x"]
    assert "`figures/quick/a.png` (commit `redraw9`)" in notes["03_x"]
    old, new = json.loads(before), json.loads(out.read_text())
    assert new["cells"][1:] == old["cells"][1:] and new["metadata"] == old["metadata"]  # outputs untouched
    assert "".join(new["cells"][0]["source"]) == "".join(old["cells"][0]["source"]) + "\n>\n> " + notes["03_x"]
    noted = out.read_text()
    publish_notebooks.note_source_changes(out.parent, source.parent, redrawn)
    assert out.read_text() == noted  # once is enough: the note is replaced, not added again
    _source(tmp_path, nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell(code))
    publish_notebooks.note_source_changes(out.parent, source.parent, redrawn)
    assert out.read_text() == before  # the notebook as the run had it again: the note goes


def test_a_copy_without_header_is_not_noted_silently():
    md = nbformat.v4.new_markdown_cell
    with pytest.raises(ValueError, match="no header cell"):
        publish_notebooks.with_source_note({"cells": [md("# A")]}, {"cells": [md("# B")]}, "03_x", "quick")
    assert publish_notebooks.with_source_note({"cells": [md("# A")]}, {"cells": [md("# A")]}, "03_x", "quick") == ""
