"""The ``vrlib`` command: ``rank``'s output formats, ``classroom generate`` and ``grade``; one-line errors."""

import argparse
import io
import json
import subprocess
import sys

import nbformat
import numpy as np
import pandas as pd
import pytest

from vrlib.cli import main
from vrlib.data import read_csv
from vrlib.selection import vulnerability_scores

from classroom_tiny import POINTS, make_assignment, submission, tiny_notebook
from conftest import make_table, require_real


def run(capsys, *argv):
    """Exit status, stdout and stderr of ``vrlib *argv`` (argparse errors exit through SystemExit)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def csv_table(tmp_path):
    df, schema = make_table(n=50, seed=11)
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return path, schema


def test_csv_output_is_vk_in_order(capsys, csv_table):
    path, schema = csv_table
    code, out, err = run(
        capsys,
        "rank",
        "--csv",
        str(path),
        "--categorical",
        ",".join(schema.categorical),
        "--continuous",
        ",".join(schema.continuous),
        "--k",
        "3",
        "--top",
        "5",
        "--format",
        "csv",
    )
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["index", "score"] and len(got) == 5
    df, _ = read_csv(path, schema.categorical, schema.continuous)
    want = vulnerability_scores(df, schema, k=3).sort_values(ascending=False, kind="stable")
    assert list(got["index"]) == list(want.index[:5])
    np.testing.assert_allclose(got["score"], want.iloc[:5], rtol=1e-9)


def test_ignore_leaves_columns_out(capsys, tmp_path):
    """An id and a free-text column left out with --ignore: the ranking is that of the table without them."""
    df, schema = make_table(n=40, seed=5)
    with_extra = df.assign(person_id=[f"p{i:03d}" for i in range(40)], note=["x"] * 40)
    path = tmp_path / "people.csv"
    with_extra[["person_id", *df.columns, "note"]].to_csv(path, index=False)
    argv = ["rank", "--csv", str(path), "--categorical", ",".join(schema.categorical)]
    argv += ["--continuous", ",".join(schema.continuous), "--k", "3", "--top", "40", "--format", "csv"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and "['person_id', 'note']" in err and "--ignore" in err, err
    code, out, err = run(capsys, *argv, "--ignore", "person_id,note")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    want = vulnerability_scores(df, schema, k=3).sort_values(ascending=False, kind="stable")
    assert list(got["index"]) == list(want.index)
    np.testing.assert_allclose(got["score"], want, rtol=1e-9)


@pytest.mark.parametrize(
    "extra,named",
    [
        (["--continuous", "x0,xl"], "'xl' (continuous), did you mean 'x1'?"),
        (["--continuous", "x0,x1", "--ignore", "c9"], "'c9' (ignore)"),
    ],
)
def test_unknown_column_names_are_named(capsys, csv_table, extra, named):
    path, _ = csv_table
    code, out, err = run(capsys, "rank", "--csv", str(path), "--categorical", "c0,c1,c2", *extra)
    assert code == 2 and out == "" and named in err and "its columns are" in err, err
    assert "neither categorical nor continuous" not in err  # the typo, not its consequence


def test_ignore_with_dataset_is_refused(capsys):
    code, out, err = run(capsys, "rank", "--dataset", "adult", "--ignore", "age")
    assert code == 2 and "apply to --csv only" in err


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_other_formats(capsys, csv_table, fmt):
    path, schema = csv_table
    code, out, err = run(
        capsys,
        "rank",
        "--csv",
        str(path),
        "--categorical",
        ",".join(schema.categorical),
        "--continuous",
        ",".join(schema.continuous),
        "--top",
        "3",
        "--format",
        fmt,
    )
    assert code == 0, err
    if fmt == "json":
        rows = json.loads(out)
        assert [r["rank"] for r in rows] == [1, 2, 3] and set(rows[0]["record"]) == set(schema.columns)
    else:
        assert "rank" in out and "V_5" in out and "c0" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--dataset", "nope"], "invalid choice"),
        (["--csv", "missing.csv", "--categorical", "a"], "not found"),
        (["--csv", "{path}", "--categorical", "c0,c1,c2", "--continuous", "x0"], "neither categorical nor continuous"),
        (["--csv", "{path}", "--categorical", "c0,c1,c2,x1", "--continuous", "x0,x1"], "declared both"),
        (["--csv", "{path}", "--categorical", "c0,c1,c2", "--continuous", "x0,x1", "--k", "50"], "choose k <= 49"),
        (["--csv", "{path}", "--categorical", "c0,c1,c2", "--continuous", "x0,x1", "--top", "51"], "--top must be"),
        (
            [
                "--csv",
                "{path}",
                "--categorical",
                "c0,c1,c2",
                "--continuous",
                "x0,x1",
                "--metric",
                "minkowski",
                "--p",
                "0.5",
            ],
            "p >= 1",
        ),
        (
            ["--csv", "{path}", "--categorical", "c0,c1,c2", "--continuous", "x0,x1", "--method", "nope"],
            "invalid choice",
        ),
        (["--csv", "{path}"], "declare the column types"),
        (
            ["--csv", "{path}", "--categorical", "c0,c1,c2", "--continuous", "x0,x1", "--p", "3"],
            "--metric minkowski only: add --metric minkowski, or leave --p out",
        ),
    ],
)
def test_errors_are_one_line_exit_2(capsys, csv_table, args, message):
    path, _ = csv_table
    argv = ["rank"] + [a.replace("{path}", str(path)) for a in args]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_nans_suggest_dropna(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,x\nu,1\nv,\nu,3\nv,4\n")
    code, _, err = run(
        capsys, "rank", "--csv", str(path), "--categorical", "a", "--continuous", "x", "--k", "1", "--top", "1"
    )
    assert code == 2 and "x: 1" in err and "--dropna" in err
    code, out, _ = run(
        capsys,
        "rank",
        "--csv",
        str(path),
        "--categorical",
        "a",
        "--continuous",
        "x",
        "--k",
        "1",
        "--top",
        "1",
        "--dropna",
        "--format",
        "csv",
    )
    assert code == 0 and out.splitlines()[0] == "index,score"


def test_default_top_prints_every_record_of_a_small_file(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,x\nu,1\nv,2\nu,3\nv,9\n")
    argv = ["rank", "--csv", str(path), "--categorical", "a", "--continuous", "x", "--k", "1", "--format", "csv"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and sorted(int(line.split(",")[0]) for line in out.splitlines()[1:]) == [0, 1, 2, 3]
    code, _, err = run(capsys, *argv, "--top", "5")  # asked for more than there are: still refused
    assert code == 2 and "--top must be between 1 and the number of records (4), got 5" in err


def test_constant_column_warns_on_one_line(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,x,y\nu,1,5\nv,2,5\nu,3,5\nv,4,5\n")
    code, out, err = run(
        capsys, "rank", "--csv", str(path), "--categorical", "a", "--continuous", "x,y", "--k", "1", "--top", "2"
    )
    assert code == 0 and "warning" in err and "constant" in err


@pytest.mark.realdata
def test_console_script_on_adult():
    require_real("adult.data", "adult.test")
    proc = subprocess.run(
        [sys.executable, "-m", "vrlib.cli", "rank", "--dataset", "adult", "--k", "5", "--top", "10", "--format", "csv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "index,score" and len(lines) == 11
    scores = [float(line.split(",")[1]) for line in lines[1:]]
    assert scores == sorted(scores, reverse=True)


# --------------------------------------------------------------------------- vrlib classroom


def test_classroom_generate_writes_release_and_checksums(capsys, tmp_path):
    (tmp_path / "src").mkdir()
    nbformat.write(tiny_notebook(), tmp_path / "src" / "00_tiny.ipynb")
    code, out, err = run(
        capsys, "classroom", "generate", "--source-dir", str(tmp_path / "src"), "--release-dir", str(tmp_path / "out")
    )
    assert code == 0, err
    assert (tmp_path / "out" / "00_tiny.ipynb").is_file() and "SHA256SUMS" in out
    assert "00_tiny.ipynb" in (tmp_path / "src" / "SHA256SUMS").read_text()


@pytest.mark.parametrize(
    "args,message",
    [
        (["missing.ipynb"], "does not exist"),
        (["{dir}"], "needs --gradebook"),
        (["{dir}", "--gradebook", "{book}", "--jobs", "0"], "jobs must be"),
        (["{dir}", "--gradebook", "{book}", "--memory-cap", "lots"], "cannot read the size"),
        (["{dir}", "--gradebook", "{book}", "--source", "x.ipynb"], "apply to a single notebook"),
    ],
)
def test_classroom_grade_errors_are_one_line(capsys, tmp_path, args, message):
    (tmp_path / "subs").mkdir()
    argv = [a.replace("{dir}", str(tmp_path / "subs")).replace("{book}", str(tmp_path / "book")) for a in args]
    code, out, err = run(capsys, "classroom", "grade", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_classroom_grade_a_class_and_one_notebook(capsys, tmp_path):
    source, released = make_assignment(tmp_path)
    submission(released, tmp_path / "subs" / "ada" / "00_tiny.ipynb")
    submission(released, tmp_path / "subs" / "bob" / "00_tiny.ipynb", {"f": "def f(x):\n    return x"})
    code, out, err = run(
        capsys,
        "classroom",
        "grade",
        str(tmp_path / "subs"),
        "--gradebook",
        str(tmp_path / "book"),
        "--source-dir",
        str(source.parent),
        "--jobs",
        "2",
        "--feedback",
        "--timeout",
        "30",
    )
    assert code == 0, err
    assert "graded ada / 00_tiny" in err and "gradebook.csv" in out
    rows = (tmp_path / "book" / "gradebook.csv").read_text().splitlines()
    assert rows[0] == "student,assignment,test,points,max_points,status,message" and len(rows) == 1 + 2 * len(POINTS)
    assert (tmp_path / "book" / "feedback" / "bob" / "00_tiny.ipynb").is_file()
    code, out, err = run(
        capsys,
        "classroom",
        "grade",
        str(tmp_path / "subs" / "bob" / "00_tiny.ipynb"),
        "--source",
        str(source),
        "--format",
        "json",
        "--timeout",
        "30",
    )
    report = json.loads(out)
    assert code == 0 and report["max_points"] == sum(POINTS.values()) and report["points"] < report["max_points"]


@pytest.mark.parametrize(
    "argv, pointer",
    [
        (["nope"], "(see vrlib --help)"),
        (["audit", "--bogus"], "(see vrlib audit --help)"),
        (["rank", "--x"], "(see vrlib rank --help)"),
        ([], "required: {rank,classroom,audit,scorecard} (see vrlib --help)"),
        (["classroom"], "required: {generate,grade} (see vrlib classroom --help)"),
    ],
)
def test_usage_errors_point_at_a_help_that_exists(capsys, argv, pointer):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.rstrip().endswith(pointer) and "vrlib vrlib" not in err


def test_top_level_help_names_what_each_subcommand_does(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]  # usage, then the description
    assert exit_.value.code == 0 and "``" not in description
    for word in ("rank", "audit", "classroom", "scorecard"):
        assert word in description, description


def _subcommands(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _subcommands(sub, (*path, name))


def test_every_help_states_its_default():
    from vrlib.cli import _parser

    unstated = []
    for path, sub in _subcommands(_parser()):
        for action in sub._actions:
            default = action.default
            if not action.option_strings or default is None or default is False or default == []:
                continue
            if default != argparse.SUPPRESS and "default" not in (action.help or ""):
                unstated.append((" ".join(path), action.option_strings[0], default))
    assert unstated == []


def test_top_level_help_shows_examples_that_parse(capsys):
    """The examples under ``vrlib --help`` are commands the parser accepts."""
    from vrlib.cli import _parser

    with pytest.raises(SystemExit):
        main(["--help"])
    epilog = capsys.readouterr().out.split("examples:\n", 1)[1].split("\neach command", 1)[0]
    examples = [line.split() for line in epilog.replace("\\\n", " ").splitlines()]
    assert len(examples) == 3 and all(words[0] == "vrlib" for words in examples)
    for words in examples:
        _parser().parse_args(words[1:])  # an unknown option or subcommand exits 2


def test_audit_help_names_every_policy_rule(capsys):
    from vrlib.audit.policy import RULES

    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "docs/audit.md" in text
    missing = [rule for rule in RULES if rule not in text]
    assert missing == []


@pytest.mark.parametrize(
    "n_verbatim, expected", [(0, ""), (5, " (and 2 of the 999 holdout records kept as non-members")]
)
def test_verbatim_sentence_names_the_null_half(n_verbatim, expected):
    """Given 1,997 holdout records, the sentence says why it counts 999 of them (the rest is the reference)."""
    from vrlib.cli import _null_verbatim

    summary = {
        "n_verbatim": n_verbatim,
        "n_verbatim_null": 2,
        "settings": {"n_holdout": 1997, "n_null": 999, "n_reference": 998},
    }
    sentence = _null_verbatim(summary)
    assert sentence.startswith(expected) and (not expected or "other 998 are the attackers' reference" in sentence)
    assert (sentence == "") == (n_verbatim == 0)
