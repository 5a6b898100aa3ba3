"""A rerun that reproduces an output leaves the manifest alone; one that changes it updates the entry and says so."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from vrlib import report  # noqa: E402


def _run(tmp_path, values, monkeypatch, commit):
    """One 'run' of a tiny notebook: a table and a figure into tmp_path/figures/quick."""
    monkeypatch.setattr(report, "commit_id", lambda: commit)
    rep = report.Reporter("99_tiny", "quick", 0, tmp_path / "figures", tmp_path / "figures" / "tables")
    rep.write_table(pd.DataFrame({"k": [1, 2], "auc": values}), "tiny", params={"k": (1, 2)})
    fig, ax = plt.subplots()
    ax.plot(values)
    rep.savefig(fig, "tiny_fig")
    plt.close(fig)
    return rep.figures_dir


def test_identical_rerun_leaves_the_manifest_byte_for_byte(tmp_path, monkeypatch, capsys):
    folder = _run(tmp_path, [0.5, 0.75], monkeypatch, "aaaaaaaaaaaa")
    manifest = (folder / "manifest.json").read_bytes()
    assert len(json.loads(manifest)) == 5  # csv, md, tex, png, pdf
    capsys.readouterr()
    _run(tmp_path, [0.5, 0.75], monkeypatch, "bbbbbbbbbbbb")  # another commit, later: same bytes out
    assert (folder / "manifest.json").read_bytes() == manifest
    assert "changed" not in capsys.readouterr().out
    # The rerun's own provenance is kept, outside the manifest.
    reruns = json.loads((folder / "provenance.json").read_text())
    assert set(reruns) == set(json.loads(manifest)) and reruns["tiny_fig.png"]["commit"] == "bbbbbbbbbbbb"
    assert json.loads(manifest)["tiny_fig.png"]["commit"] == "aaaaaaaaaaaa"


def test_changed_bytes_update_the_entry_and_say_so(tmp_path, monkeypatch, capsys):
    folder = _run(tmp_path, [0.5, 0.75], monkeypatch, "aaaaaaaaaaaa")
    capsys.readouterr()
    _run(tmp_path, [0.5, 0.8], monkeypatch, "cccccccccccc")
    out = capsys.readouterr().out
    assert "changed since the last run" in out and "tables/tiny.csv" in out and "tiny_fig.png" in out
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tables/tiny.csv"]["commit"] == "cccccccccccc"
    assert manifest["tiny_fig.png"]["commit"] == "cccccccccccc"


def test_same_bytes_other_parameters_update_the_entry(tmp_path, monkeypatch):
    """Identical bytes made with other parameters are a different record: the entry is updated."""
    folder = _run(tmp_path, [0.5, 0.75], monkeypatch, "aaaaaaaaaaaa")
    monkeypatch.setattr(report, "commit_id", lambda: "dddddddddddd")
    rep = report.Reporter("99_tiny", "quick", 0, tmp_path / "figures", tmp_path / "figures" / "tables")
    rep.write_table(pd.DataFrame({"k": [1, 2], "auc": [0.5, 0.75]}), "tiny", params={"k": (1, 3)})
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tables/tiny.csv"]["parameters"] == {"k": [1, 3]}
    assert manifest["tiny_fig.png"]["commit"] == "aaaaaaaaaaaa"


def test_committed_figures_log_reruns_under_results(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "PROJECT_ROOT", tmp_path)
    assert report.provenance_log(tmp_path / "figures" / "quick") == tmp_path / "results" / "quick" / "provenance.json"
    assert (
        report.provenance_log(tmp_path / "elsewhere" / "quick") == tmp_path / "elsewhere" / "quick" / "provenance.json"
    )
