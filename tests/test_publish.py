"""scripts/publish_notebooks.py: what it keeps and drops of an executed notebook, on a notebook made here."""

from __future__ import annotations

import base64
import importlib.util
import io
import json

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
