"""scripts/publish_notebooks.py names the data folder beside the checkout as ``../shared/data``, not by its absolute path."""

from __future__ import annotations

import importlib.util
import json

import nbformat

from conftest import PROJECT_ROOT

spec = importlib.util.spec_from_file_location("publish_notebooks", PROJECT_ROOT / "scripts" / "publish_notebooks.py")
publish_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(publish_notebooks)


def test_shared_data_folder_is_named_relative(tmp_path, monkeypatch):
    monkeypatch.delenv("VRLIB_DATA_DIR", raising=False)
    run_root = tmp_path / "clone"  # the checkout that ran the notebook, with ../shared/data beside it
    shared = tmp_path / "shared" / "data"
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"parameters": {"profile": "quick", "seed": 0}, "end_time": "2026-01-02T11:00:00"}
    cell = nbformat.v4.new_code_cell("vrlib.load('census')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"put the file in {shared} for all rows\n")]
    nb.cells = [cell]
    path = tmp_path / "results" / "05_x.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    out = publish_notebooks.publish(path, tmp_path / "out", "quick", ({}, "m.json"), 1000, run_roots=[run_root])
    text = "".join(json.loads(out.read_text())["cells"][1]["outputs"][0]["text"])
    assert text == "put the file in ../shared/data for all rows\n"
