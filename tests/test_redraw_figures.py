"""scripts/redraw_figures.py: figures drawn again from committed tables, the manifest saying so truthfully."""

import importlib.util
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from vrlib import report  # noqa: E402
from vrlib.errors import VrlibError  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "redraw_figures.py"


@pytest.fixture(scope="module")
def redraw():
    spec = importlib.util.spec_from_file_location("redraw_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _profile(root: Path) -> dict:
    """A `quick` folder with MCA Fig. 3's table, its manifest entry and an old figure."""
    folder = root / "quick"
    (folder / "tables").mkdir(parents=True)
    table = pd.DataFrame({"frequency": [1, 2, 5], "members": [10, 4, 1], "non_members": [90, 3, 0]}).assign(
        generator="G"
    )
    table.to_csv(folder / "tables" / "mca_fig3.csv", index=False)
    run = {"notebook": "07_mca_membership_collisions", "profile": "quick", "seed": 0, "commit": "aaaaaaaaaaaa",
           "written": "2026-01-01T00:00:00", "elapsed_s": 5.0, "parameters": {"n_train": None}}  # fmt: skip
    manifest = {"tables/mca_fig3.csv": run, "mca_fig3.png": {**run, "commit": "bbbbbbbbbbbb"}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "mca_fig3.png").write_bytes(b"old")
    return manifest


def test_redraw_records_the_drawing_commit_and_keeps_the_tables_provenance(redraw, tmp_path, monkeypatch):
    before = _profile(tmp_path)
    monkeypatch.setattr(report, "commit_id", lambda: "cccccccccccc")
    files = redraw.redraw("quick", ["mca_fig3"], figures_root=tmp_path)
    assert sorted(f.name for f in files) == ["mca_fig3.pdf", "mca_fig3.png"]
    assert (tmp_path / "quick" / "mca_fig3.png").read_bytes()[:4] == b"\x89PNG"
    manifest = json.loads((tmp_path / "quick" / "manifest.json").read_text())
    assert manifest["tables/mca_fig3.csv"] == before["tables/mca_fig3.csv"]  # the table's run stays as it was
    for name in ("mca_fig3.png", "mca_fig3.pdf"):
        entry = manifest[name]
        assert entry["commit"] == "cccccccccccc" and entry["notebook"] == "07_mca_membership_collisions"
        assert "elapsed_s" not in entry  # no run time for a drawing
        source = entry["drawn_from"]["tables"]["tables/mca_fig3.csv"]
        assert source["commit"] == "aaaaaaaaaaaa" and source["written"] == "2026-01-01T00:00:00"
    # the same table and code draw the same bytes
    first = (tmp_path / "quick" / "mca_fig3.png").read_bytes()
    redraw.redraw("quick", ["mca_fig3"], out=tmp_path / "again", figures_root=tmp_path)
    assert (tmp_path / "again" / "mca_fig3.png").read_bytes() == first


def test_redraw_refuses_a_dirty_tree_unknown_figures_and_missing_entries(redraw, tmp_path, monkeypatch):
    _profile(tmp_path)
    monkeypatch.setattr(report, "commit_id", lambda: "cccccccccccc-dirty")
    with pytest.raises(VrlibError, match="commit the plotting code first"):
        redraw.redraw("quick", ["mca_fig3"], figures_root=tmp_path)
    assert (tmp_path / "quick" / "mca_fig3.png").read_bytes() == b"old"
    # a dry run elsewhere is allowed and leaves the manifest alone
    before = (tmp_path / "quick" / "manifest.json").read_text()
    redraw.redraw("quick", ["mca_fig3"], out=tmp_path / "dry", figures_root=tmp_path)
    assert (tmp_path / "dry" / "mca_fig3.pdf").exists()
    assert (tmp_path / "quick" / "manifest.json").read_text() == before
    monkeypatch.setattr(report, "commit_id", lambda: "cccccccccccc")
    with pytest.raises(VrlibError, match="achilles_fig1"):
        redraw.redraw("quick", ["achilles_fig1"], figures_root=tmp_path)
    with pytest.raises(VrlibError, match="missing"):
        redraw.redraw("quick", ["domias_fig13"], figures_root=tmp_path)
    (tmp_path / "quick" / "manifest.json").write_text("{}")
    with pytest.raises(VrlibError, match="no entry"):
        redraw.redraw("quick", ["mca_fig3"], figures_root=tmp_path)
