"""The ``vrlib`` command: rank records by privacy risk, audit a synthetic release, run classroom assignments, regenerate the scorecard.

Examples
--------
``vrlib rank --dataset adult --k 5 --top 10 --format csv``
``vrlib rank --csv people.csv --categorical sex,job --continuous age,income --ignore id --dropna``
``vrlib classroom generate`` and ``vrlib classroom grade SUBMISSIONS/ --gradebook DIR --jobs 4`` (see :mod:`vrlib.classroom`)
``vrlib audit --train TRAIN.csv --synthetic RELEASE.csv --holdout HOLDOUT.csv --categorical … --continuous … --out DIR``
writes a privacy report on a synthetic release (see :mod:`vrlib.audit`; exit status 3 when ``--policy`` is violated)
``vrlib scorecard`` regenerates ``figures/SCORECARD.md``, ``figures/PROVENANCE.md`` and the README's summary
(``--check``: compare only; see :mod:`vrlib.scorecard`)

Bad input gives one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

from vrlib.data import DATASETS, load, read_csv
from vrlib.errors import VrlibError
from vrlib.selection import METHODS, rank_records

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr."""

    def error(self, message):
        # prog is "vrlib" for the top-level parser and "vrlib audit" for a subcommand's
        self.exit(EXIT_USAGE, f"vrlib: error: {message} (see {self.prog} --help)\n")


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


_EXAMPLES = """\
examples:
  vrlib rank --dataset adult --k 5 --top 10
  vrlib rank --csv people.csv --categorical sex,job --continuous age,income --ignore id
  vrlib audit --train TRAIN.csv --synthetic RELEASE.csv --holdout HOLDOUT.csv \\
      --categorical sex,job --continuous age,income --out audit/
each command's options: vrlib COMMAND --help; more in the project's README.md and docs/audit.md.
"""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vrlib",
        description=__doc__.split("\n")[0].replace("``", ""),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rank = sub.add_parser(
        "rank",
        help="rank records from highest to lowest risk",
        description="Rank records from highest to lowest privacy risk.",
    )
    source = rank.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--dataset",
        choices=DATASETS,
        help="a built-in dataset (index = the record's row in vrlib.load(NAME), the papers' Ω)",
    )
    source.add_argument("--csv", metavar="FILE", help="your own CSV file (index = row position in the file)")
    rank.add_argument("--categorical", type=_columns, default=[], metavar="A,B", help="categorical columns of --csv")
    rank.add_argument("--continuous", type=_columns, default=[], metavar="C,D", help="continuous columns of --csv")
    rank.add_argument(
        "--ignore", type=_columns, default=[], metavar="E,F", help="columns of --csv to leave out (e.g. an id)"
    )
    rank.add_argument("--dropna", action="store_true", help="drop rows of --csv with missing values (says how many)")
    rank.add_argument(
        "--na-values",
        type=_columns,
        default=[],
        metavar="NA,?",
        help="spellings that mark a missing value in --csv (default: none; only an empty field is missing)",
    )
    rank.add_argument("--encoding", default="utf-8", help="text encoding of --csv (default utf-8)")
    rank.add_argument("--method", choices=METHODS, default="distance", help="how to rank (default: distance, i.e. V_k)")
    rank.add_argument("--k", type=int, default=5, help="neighbours for V_k (default 5)")
    rank.add_argument(
        "--metric", choices=("cosine", "minkowski"), default="cosine", help="eq. 5 or eq. 6 (default cosine)"
    )
    rank.add_argument(
        "--p", type=float, default=None, help="Minkowski order, p >= 1 or inf (default 2 with --metric minkowski)"
    )
    rank.add_argument(
        "--include-self", action="store_true", help="count the record itself among its k neighbours (authors' code)"
    )
    rank.add_argument(
        "--rare-threshold",
        type=float,
        default=0.05,
        help="rare method: relative frequency below which a category is rare (default 0.05)",
    )
    rank.add_argument(
        "--bins", type=int, default=10, help="loglik method: percentile bins per continuous column (default 10)"
    )
    rank.add_argument(
        "--top", type=int, default=None, help="how many records to print (default 10, or all when there are fewer)"
    )
    rank.add_argument("--seed", type=int, default=0, help="seed of the random and rare methods (default 0)")
    rank.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format (default table)"
    )
    _add_classroom(sub)
    _add_audit(sub)
    card = sub.add_parser(
        "scorecard",
        help="regenerate the reproduction scorecard and the provenance page",
        description="Write figures/SCORECARD.md, figures/PROVENANCE.md and the README's summary "
        "from the committed tables and manifests.",
    )
    card.add_argument("--root", default=None, help="the project's folder (default: the one vrlib is installed from)")
    card.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file differs")
    _name_choices(sub)
    return parser


def _name_choices(sub) -> None:
    """A missing subcommand is reported by its choices ("required: {rank,…}"), not by the internal name "command"."""
    sub.metavar = "{" + ",".join(sub.choices) + "}"


def _add_classroom(sub) -> None:
    """``vrlib classroom generate|grade``: the logic is in :mod:`vrlib.classroom`."""
    classroom = sub.add_parser(
        "classroom",
        help="generate student versions of the assignments, grade submissions",
        description="Classroom assignments (notebooks/assignments/).",
    )
    action = classroom.add_subparsers(dest="action", required=True, parser_class=_Parser)
    gen = action.add_parser(
        "generate",
        help="write the student versions into notebooks/assignments/release/",
        description="Write the student versions of the solution notebooks.",
    )
    gen.add_argument("--source-dir", default=None, help="solution notebooks (default notebooks/assignments)")
    gen.add_argument("--release-dir", default=None, help="where the student versions go (default SOURCE_DIR/release)")
    grade = action.add_parser(
        "grade",
        help="grade a submission or a class of them into a gradebook",
        description="Grade submissions: the student's code in a bubblewrap sandbox, the hidden tests in the grader. "
        "SUBMISSIONS is a notebook, a folder of <student>.ipynb, a folder of <student>/ folders, "
        "or nbgrader's submitted/<student>/<assignment>/ layout.",
    )
    grade.add_argument("submissions", metavar="SUBMISSIONS", help="a notebook or a folder of submissions")
    grade.add_argument(
        "--gradebook",
        default=None,
        metavar="DIR",
        help="write reports/, gradebook.csv and grades.csv here (needed for a folder)",
    )
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    grade.add_argument(
        "--feedback", action="store_true", help="also write each graded notebook (feedback/ of the gradebook)"
    )
    grade.add_argument(
        "--source", default=None, help="the solution notebook of a single submission (default: found by name)"
    )
    grade.add_argument("--source-dir", default=None, help="solution notebooks (default notebooks/assignments)")
    grade.add_argument("--timeout", type=float, default=120, help="seconds one cell or one call may run (default 120)")
    grade.add_argument("--time-cap", type=float, default=600, help="seconds a whole submission may use (default 600)")
    grade.add_argument("--memory-cap", default="4G", help="address space of the student's process (default 4G)")
    grade.add_argument("--output-cap", default="100k", help="printed output kept per submission (default 100k)")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the students' code without the bubblewrap sandbox: only for code you trust",
    )
    grade.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    grade.add_argument(
        "--executed",
        default=None,
        metavar="FILE",
        help="a single submission: write its graded notebook here (as --feedback does)",
    )
    _name_choices(action)


_AUDIT_FILES = """\
the three files:
  CSV with a header line naming the columns; .gz files are read compressed; a UTF-8
  byte-order mark is skipped; a header with no comma but ';', tabs or '|' is read with
  that separator, and a blank after a separator is skipped ("39, Male" reads as
  "39,Male"); a first column without a name (a row index) is left out; the columns
  may come in any order in each file. Every column is declared once, in --categorical
  or --continuous, or left out with --ignore (an identifier, a column one file alone
  has, a column the release lacks or leaves empty). Row i of TRAIN is record i.
values:
  continuous: plain numbers (39, 39.0, blanks around them are fine); dates, thousands
  separators (1,234) and decimal commas (0,5) are refused with what to write instead;
  a release or holdout column with no value in the training data's range (another unit)
  is named (values_out_of_range).
  categorical: a release or holdout value that the training data spells otherwise
  (1.0 for 1, true or 1 for True, 'male ' for 'Male') is read as the training
  spelling and counted (respelled_categories); values the training data never has are
  audited as categories of their own and counted (unseen_categories). A column with
  a different value in every training record (identifier_column) or in 90 % or more
  of them (near_unique_column) is named: leave it out with --ignore. Missing values
  are refused: fill them (in a categorical column, a word such as 'missing') or
  remove those rows in every file.
sizes:
  any sizes; the holdout needs at least 20 records, and a few thousand for the flag to
  see single copies (a smaller one gives the holdout_small warning). A holdout from
  another population gives holdout_shift and no record is flagged; one told apart from
  the training data a little gives holdout_difference (records are still flagged).
exit status: 0 done, 2 bad input (before any work), 3 a --policy threshold exceeded.
what each output column and figure means, and how the flag decides: docs/audit.md.
"""


def _add_audit(sub) -> None:
    """``vrlib audit``: the logic is in :mod:`vrlib.audit`."""
    from vrlib.audit.policy import RULES as POLICY_RULES
    from vrlib.audit.pvalues import COMBINATIONS
    from vrlib.audit.scores import ATTACKS
    from vrlib.generators import REGISTRY as GENERATORS

    a = sub.add_parser(
        "audit",
        help="privacy report on a synthetic release of your own training data",
        description="Which training records are at risk in a synthetic release, and how sure we are: "
        "writes report.html, summary.json and records.csv into --out.",
        epilog=_AUDIT_FILES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument("--train", required=True, metavar="TRAIN.csv", help="the records the generator was trained on")
    a.add_argument("--synthetic", required=True, metavar="RELEASE.csv", help="the synthetic release")
    a.add_argument(
        "--holdout",
        required=True,
        metavar="HOLDOUT.csv",
        help="records of the same population NOT used for training (at least 20)",
    )
    a.add_argument("--categorical", type=_columns, default=[], metavar="A,B", help="categorical columns")
    a.add_argument("--continuous", type=_columns, default=[], metavar="C,D", help="continuous columns")
    a.add_argument(
        "--ignore",
        type=_columns,
        default=[],
        metavar="E,F",
        help="columns to leave out of whichever files hold them (an id, a column one file alone has)",
    )
    a.add_argument("--out", required=True, metavar="DIR", help="folder for report.html, summary.json, records.csv")
    a.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    a.add_argument("--fdr", type=float, default=0.05, help="false-discovery rate of the flag (default 0.05)")
    a.add_argument(
        "--combine",
        choices=COMBINATIONS,
        default="fisher",
        help="how attacks' p-values are merged before calibration against the holdout (default fisher)",
    )
    a.add_argument(
        "--attacks",
        type=_columns,
        default=list(ATTACKS),
        metavar="A,B",
        help=f"membership attacks (default {','.join(ATTACKS)})",
    )
    a.add_argument(
        "--merge",
        type=_columns,
        default=["copies", "distance"],
        metavar="A,B",
        help="attacks whose p-values make the flag and the risk rank (default copies,distance)",
    )
    a.add_argument("--k", type=int, default=5, help="neighbours of the V_k vulnerability score (default 5)")
    a.add_argument(
        "--known",
        type=_columns,
        default=None,
        metavar="A,B",
        help="columns the WP29 attacker knows (default: all but --secret)",
    )
    a.add_argument(
        "--secret",
        default=None,
        help="column the inference attack guesses (default: the last categorical column that varies in TRAIN)",
    )
    a.add_argument("--no-wp29", action="store_true", help="skip singling out, linkability and inference")
    a.add_argument(
        "--generator",
        default=None,
        help=f"also play the model-seeded game with this generator (slow): one of {', '.join(sorted(GENERATORS))}",
    )
    a.add_argument("--epsilon", type=float, default=None, help="declared ε of a PrivBayes release (with --generator)")
    a.add_argument(
        "--policy",
        default=None,
        metavar="POLICY.json",
        help='a JSON object of largest accepted figures, e.g. {"max_membership_auc": 0.55, "max_verbatim": 0}; '
        f"exit status 3 when one is exceeded. Keys: {', '.join(POLICY_RULES)}",
    )
    a.add_argument("--show-values", action="store_true", help="put record values into records.csv and the report")
    a.add_argument("--na-values", type=_columns, default=[], metavar="NA,?", help="spellings of a missing value")
    a.add_argument(
        "--encoding",
        type=_columns,
        default=["utf-8"],
        metavar="ENC[,ENC,ENC]",
        help="text encoding of the CSV files: one for all, or one each for TRAIN,RELEASE,HOLDOUT (default utf-8)",
    )
    a.add_argument(
        "--resolution",
        type=float,
        default=0.0001,
        help="changes below this share of a column's range count as copies (default 0.0001)",
    )
    a.add_argument(
        "--tolerant",
        action="store_true",
        help="flag on the largest closeness of the distance views and of a view where one changed category is free",
    )
    a.add_argument(
        "--assign",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="score each record on the released records nearest to it among training and holdout records pooled "
        "(a copy no longer makes its record's near-twins in the holdout look copied); on by default, "
        "off with --no-assign or --tolerant",
    )


def _null_verbatim(summary: dict) -> str:
    """How many holdout records (non-members) occur verbatim too, when some training records do.

    Only the null half of the holdout is counted (the other half is the attackers' reference), and the
    sentence says so: given 2,000 holdout records, a bare "of 1,000" reads as records lost.
    """
    if not summary.get("n_verbatim") or summary.get("n_verbatim_null") is None:
        return ""
    settings = summary["settings"]
    return (
        f" (and {summary['n_verbatim_null']:,} of the {settings['n_null']:,} holdout records kept as non-members"
        f" to compare with; the other {settings['n_reference']:,} are the attackers' reference)"
    )


def _audit(args) -> tuple[str, int]:
    from pathlib import Path

    from vrlib.audit import audit, read_tables
    from vrlib.audit.pipeline import check_out
    from vrlib.audit.policy import EXIT_VIOLATED, load_policy

    check_out(args.out)  # a file or a foreign folder fails before the long work
    policy = load_policy(args.policy) if args.policy else None  # a bad policy fails before the long work
    if args.generator is None and args.epsilon is not None:
        raise VrlibError("--epsilon applies to the model-seeded game: give --generator too")
    encoding = args.encoding[0] if len(args.encoding) == 1 else args.encoding
    train, synthetic, holdout, schema = read_tables(
        args.train,
        args.synthetic,
        args.holdout,
        args.categorical,
        args.continuous,
        args.na_values,
        encoding,
        check=False,  # audit() checks them, and gives each warning once
        ignore=args.ignore,
    )
    result = audit(
        train,
        synthetic,
        holdout,
        schema,
        seed=args.seed,
        fdr=args.fdr,
        combine=args.combine,
        attacks=args.attacks,
        merged=args.merge,
        k=args.k,
        known=args.known,
        secret=args.secret,
        wp29=not args.no_wp29,
        generator=args.generator,
        epsilon=args.epsilon,
        policy=policy,
        show_values=args.show_values,
        resolution=args.resolution,
        tolerant=args.tolerant,
        assign=args.assign,
        out=args.out,
    )
    s = result.summary
    auc = s["membership_auc"]
    interval = f"{auc['auc']:.3f} [{auc['ci_low']:.3f}, {auc['ci_high']:.3f}]"
    if s["flag_withheld"]:  # the holdout is from another population: no flag, no leak claimed
        first = (
            "no record flagged: the holdout is not a sample of the training data's population (holdout_shift), "
            f"so the audit cannot tell whether records leak; {s['n_verbatim']} copied verbatim; "
            f"training vs holdout AUC of the attacks {interval}: a population difference, not a leak"
        )
    else:
        first = (
            f"{s['n_flagged']:,} of {s['settings']['n_train']:,} training records flagged at {args.fdr:.0%} FDR; "
            f"{s['n_verbatim']} copied verbatim{_null_verbatim(s)}; membership AUC {interval}"
        )
    lines = [
        first,
        s["flag_resolution"]["note"],
        *s["disagreements"],
        f"wrote {Path(args.out) / 'report.html'}, summary.json, records.csv",
    ]
    status = 0
    if s["policy"] is not None:
        if s["policy"]["passed"]:
            lines.append("policy: passed")
        else:
            lines += [f"policy: {v}" for v in s["policy"]["violations"]]
            status = EXIT_VIOLATED
    return "\n".join(lines), status


def _classroom(args) -> str:
    from pathlib import Path

    from vrlib import classroom
    from vrlib.classroom.fence import parse_size

    if args.action == "generate":
        written = classroom.generate(args.source_dir, args.release_dir)
        sums = classroom.assignments(args.source_dir)[0].parent / "SHA256SUMS"
        return "\n".join([f"wrote {p}" for p in written] + [f"wrote {sums}"])
    options = {
        "timeout": args.timeout,
        "time_cap": args.time_cap,
        "memory_cap": parse_size(args.memory_cap),
        "output_cap": parse_size(args.output_cap),
        "sandbox": not args.no_sandbox,
    }
    path = Path(args.submissions)
    if path.is_file() and args.gradebook is None:
        report = classroom.grade(
            path, source=args.source, source_dir=args.source_dir, feedback=args.executed, **options
        )
        return json.dumps(report.to_dict(), indent=1) if args.format == "json" else report.format()
    if args.gradebook is None:
        raise VrlibError(
            f"{path} is not a notebook: grading a folder needs --gradebook DIR"
            if path.exists()
            else f"{path} does not exist"
        )
    if args.source is not None or args.executed is not None:
        raise VrlibError("--source and --executed apply to a single notebook graded without --gradebook")

    from vrlib.classroom.grader import clean_text  # a student's file name can hold terminal escape codes

    def progress(sub, report):
        print(
            f"graded {clean_text(sub.student)} / {sub.assignment}: {report.points:g} / {report.max_points:g}"
            f" ({report.seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    results = classroom.grade_class(
        path,
        args.gradebook,
        source_dir=args.source_dir,
        jobs=args.jobs,
        feedback=args.feedback,
        progress=progress,
        **options,
    )
    if args.format == "json":
        return json.dumps(
            [{"student": clean_text(s.student), "assignment": s.assignment, **r.to_dict()} for s, r in results],
            indent=1,
        )
    lines = [f"{clean_text(s.student):<20} {s.assignment:<36} {r.points:>6g} / {r.max_points:<6g}" for s, r in results]
    book = Path(args.gradebook)
    return "\n".join(lines + [f"wrote {book / 'gradebook.csv'} and {book / 'grades.csv'}"])


def _rank(args) -> str:
    if args.dataset:
        if args.categorical or args.continuous or args.ignore or args.dropna or args.na_values:
            raise VrlibError("--categorical, --continuous, --ignore, --dropna and --na-values apply to --csv only")
        df, schema = load(args.dataset)
    else:
        if not (args.categorical or args.continuous):
            raise VrlibError("with --csv, declare the column types with --categorical and/or --continuous")
        df, schema = read_csv(
            args.csv,
            args.categorical,
            args.continuous,
            dropna=args.dropna,
            na_values=args.na_values,
            encoding=args.encoding,
            ignore=args.ignore,
        )
    _check_numbers(args, len(df))
    top = min(10, len(df)) if args.top is None else args.top
    if top < 1 or top > len(df):
        raise VrlibError(f"--top must be between 1 and the number of records ({len(df)}), got {top}")
    params = {
        "distance": {"k": args.k, "metric": args.metric, "p": args.p, "include_self": args.include_self},
        "rare": {"rare_threshold": args.rare_threshold},
        "loglik": {"bins": args.bins},
        "random": {},
    }[args.method]
    if args.method == "distance" and args.metric == "minkowski" and args.p is None:
        params["p"] = 2.0
    ranked = rank_records(df, schema, args.method, seed=args.seed, **params).iloc[:top]
    if args.format == "csv":
        lines = ["index,score"] + [f"{i},{s:.10g}" for i, s in ranked.items()]
        return "\n".join(lines)
    records = df.loc[ranked.index]
    if args.format == "json":
        rows = [
            {
                "rank": r + 1,
                "index": _plain(i),
                "score": _plain(float(s)),
                "record": {c: _plain(v) for c, v in records.loc[i].items()},
            }
            for r, (i, s) in enumerate(ranked.items())
        ]
        return json.dumps(rows, indent=1, allow_nan=False)
    shown = records.copy()
    shown.insert(0, ranked.name, ranked.to_numpy())
    shown.insert(0, "rank", range(1, len(shown) + 1))
    shown.index.name = "index"
    return shown.to_string()


def _check_numbers(args, n_records: int) -> None:
    """Refuse option values that would crash deep inside, or silently mean nothing."""
    if args.p is not None and args.metric != "minkowski":
        raise VrlibError("--p applies to --metric minkowski only: add --metric minkowski, or leave --p out")
    if args.seed < 0:
        raise VrlibError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.bins < 1:
        raise VrlibError(f"--bins must be a positive integer, got {args.bins}")
    if not 0 < args.rare_threshold <= 1:
        raise VrlibError(f"--rare-threshold must be a fraction in (0, 1], got {args.rare_threshold}")
    if args.method == "distance" and n_records < 2:
        raise VrlibError(
            f"the table has {n_records} record(s); ranking by distance needs at least 2 (each record's neighbours are the others)"
        )


def _plain(value):
    """A strict-JSON Python scalar (a missing or non-finite number becomes null)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _warn_one_line(message, category, filename, lineno, file=None, line=None):
    print(f"vrlib: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    """Entry point of the ``vrlib`` console script."""
    args = _parser().parse_args(argv)
    warnings.showwarning = _warn_one_line
    if args.command == "scorecard":
        from vrlib import scorecard

        return scorecard.main((["--root", args.root] if args.root else []) + (["--check"] if args.check else []))
    status = 0
    try:
        if args.command == "audit":
            out, status = _audit(args)
        else:
            out = _classroom(args) if args.command == "classroom" else _rank(args)
    except VrlibError as exc:
        print(f"vrlib: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(out)
    except BrokenPipeError:  # e.g. piped into head
        pass
    return status


if __name__ == "__main__":
    sys.exit(main())
