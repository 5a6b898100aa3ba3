"""The pages a newcomer reads hold no broken link, no missing file and no command that cannot run as written.

For README.md, docs/*.md, data/README.md and the teacher's page: every relative link reaches a file,
and its ``#anchor`` a heading of that file (GitHub's rule for heading ids); every ``vrlib`` command
names a subcommand and options the command line has; every command of ``run_all.sh``, ``scripts/``
or ``benchmarks/`` names a file that exists and options it defines; a script run by its path
alone (no ``python`` before it) is executable; and a project path named in code exists.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from vrlib.cli import _parser

from conftest import PROJECT_ROOT

PAGES = [
    "README.md",
    *sorted(f"docs/{p.name}" for p in (PROJECT_ROOT / "docs").glob("*.md")),
    "data/README.md",
    "notebooks/assignments/README.md",
]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9_.-]*)")
PROJECT_PATH = re.compile(r"(?:benchmarks|data|docs|figures|notebooks|scripts|tests|vrlib)/\S*")
PROGRAM = re.compile(r"(?:\./)?((?:scripts|benchmarks)/[\w.-]+\.(?:py|sh)|run_all\.sh|run_tests\.sh)")


def _prose(text: str) -> str:
    return FENCE.sub("", text)


def github_anchors(text: str) -> set[str]:
    """The ids GitHub gives the headings of a Markdown page (and explicit ``<a id=…>``/``name`` targets)."""
    seen: dict[str, int] = {}
    anchors = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", _prose(text), re.M):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading counts by its text
        slug = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def broken_links(page: Path, root: Path) -> list[str]:
    """Relative links (Markdown or HTML) of ``page`` whose file or anchor does not exist."""
    text = _prose(page.read_text(encoding="utf-8"))
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'(?:href|src)="([^"]+)"', text)
    broken = []
    for target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or root.resolve() not in (file, *file.parents):
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in github_anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target} (no heading #{anchor} in {file.name})")
    return broken


def command_lines(text: str) -> list[str]:
    """Every line of a code block and every inline code span (a span may wrap onto the next line)."""
    lines = []
    for block in FENCE.findall(text):
        lines += block.replace("\\\n", " ").splitlines()
    lines += [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", _prose(text))]
    return lines


def _vrlib_options() -> dict[tuple[str, ...], set[str]]:
    found = {}

    def walk(parser, path):
        found[path] = {o for a in parser._actions for o in a.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(_parser(), ())
    return found


def _defined_options(program: Path) -> set[str]:
    """Options a script defines: quoted ``--name`` strings (argparse), or any ``--name`` of a shell script."""
    source = program.read_text(encoding="utf-8")
    if program.suffix == ".sh":
        return set(OPTION.findall(source))
    return set(re.findall(r"""["'](--[a-z][a-z0-9_.-]*)["']""", source))


def command_problems(page: Path, root: Path, vrlib_options=None) -> list[str]:
    """Commands of ``page`` that name a missing program, subcommand or option, or run a script that cannot run."""
    vrlib_options = _vrlib_options() if vrlib_options is None else vrlib_options
    commands = {path[0] for path in vrlib_options if path}
    problems = []
    for line in command_lines(page.read_text(encoding="utf-8")):
        line = line.split(" #")[0]
        for m in re.finditer(r"(?:^|[\s/(])vrlib ([a-z]+)((?: [a-z]+)?)(.*)", line):
            path = (m.group(1),)
            if path[0] not in commands:
                continue  # prose such as "vrlib is a package"
            if (*path, m.group(2).strip()) in vrlib_options:
                path = (*path, m.group(2).strip())
            rest = m.group(3) if len(path) == 2 else m.group(2) + m.group(3)
            rest = re.split(r"[;|&)]", rest)[0]
            known = vrlib_options[path] | {"--help"}
            problems += [
                f"vrlib {' '.join(path)} has no {o}: {line.strip()}" for o in OPTION.findall(rest) if o not in known
            ]
        m = PROGRAM.search(line)
        if not m:
            continue
        program = root / m.group(1)
        if not program.is_file():
            problems.append(f"no file {m.group(1)}: {line.strip()}")
            continue
        before = line[: m.start()].split()
        run_by_path = all(re.fullmatch(r"\w+=\S*", word) for word in before)  # only VAR=value before it
        args = line[m.end() :]
        if run_by_path and args.strip() and not os.access(program, os.X_OK):
            problems.append(f"{m.group(1)} is not executable; write `.venv/bin/python {m.group(1)}`: {line.strip()}")
        if program.name == "run_tests.sh":
            continue  # its other arguments go to pytest
        known = _defined_options(program) | {"--help"}
        if program.name == "build_site.sh":  # it passes its arguments on to build_site.py
            known |= _defined_options(root / "scripts" / "build_site.py")
        args = re.split(r"[;|&)]", args)[0]
        problems += [f"{m.group(1)} has no {o}: {line.strip()}" for o in OPTION.findall(args) if o not in known]
    return problems


def missing_paths(page: Path, root: Path) -> list[str]:
    """Paths of the project named in code (``vrlib/cli.py``, ``docs/runs.md``) that do not exist.

    Paths with a wildcard or a placeholder (``figures/<profile>/``, ``achilles_fig1.*``) and outputs
    of a run (under ``results/``, ``build/`` or the cache) are not checked.
    """
    missing = set()
    for line in command_lines(page.read_text(encoding="utf-8")):
        for token in line.split():
            path = token.strip("()[],;:'\"").removeprefix("./").rstrip(".")
            if not PROJECT_PATH.fullmatch(path) or re.search(r"[*<>{}…|$]", path):
                continue
            if not (root / path).exists():
                missing.add(path)
    return sorted(missing)


@pytest.mark.parametrize("name", PAGES)
def test_every_named_path_exists(name):
    assert missing_paths(PROJECT_ROOT / name, PROJECT_ROOT) == []


def test_missing_paths_are_found(project):
    page = project / "README.md"
    page.write_text(
        "`scripts/tool.py` and `docs/runs.md.` exist, `docs/gone.md` and `vrlib/nope/` do not;"
        " `figures/<profile>/` and `results/smoke/x` are not checked\n"
    )
    assert missing_paths(page, project) == ["docs/gone.md", "vrlib/nope/"]


@pytest.mark.parametrize("name", PAGES)
def test_every_link_resolves(name):
    assert broken_links(PROJECT_ROOT / name, PROJECT_ROOT) == []


@pytest.mark.parametrize("name", PAGES)
def test_every_command_can_run_as_written(name):
    assert command_problems(PROJECT_ROOT / name, PROJECT_ROOT) == []


def test_commands_are_read_from_blocks_and_wrapped_spans():
    lines = command_lines("run `vrlib rank\n--dataset adult`\n\n```bash\nvrlib audit --train T \\\n  --out o\n```\n")
    assert sorted(lines) == ["vrlib audit --train T    --out o", "vrlib rank --dataset adult"]


def test_the_pages_hold_commands_to_check():
    """The README's commands are seen at all (a parser that found none would pass everything)."""
    lines = command_lines((PROJECT_ROOT / "README.md").read_text(encoding="utf-8"))
    assert any("vrlib audit --train" in line for line in lines)
    assert any(PROGRAM.search(line) for line in lines)


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "docs" / "runs.md").write_text("# Runs\n\n## The cache\n\n## Lost in the Averages, Figs. 1–2 (ε)\n")
    tool = tmp_path / "scripts" / "tool.py"
    tool.write_text('import argparse\np = argparse.ArgumentParser()\np.add_argument("--profile")\n')
    tool.chmod(0o644)
    return tmp_path


def test_links_found_broken(project):
    page = project / "README.md"
    page.write_text(
        "[a](docs/runs.md#the-cache) [b](docs/runs.md#lost-in-the-averages-figs-12-ε) [c](https://x.org/y#z)\n"
        '[d](docs/nope.md) [e](docs/runs.md#the-cash) [f](#runs) <img src="figures/x.png">\n\n# Runs\n\n'
        "```\n[g](inside/a/code/block.md)\n```\n"
    )
    assert broken_links(page, project) == [
        "docs/nope.md (no such file)",
        "docs/runs.md#the-cash (no heading #the-cash in runs.md)",
        "figures/x.png (no such file)",
    ]


def test_commands_found_wrong(project):
    page = project / "README.md"
    page.write_text(
        "`vrlib rank --dataset adult --k 5` and `vrlib rank --kk 5`; `vrlib classroom grade S --jobs 2 --job 2`\n"
        "`.venv/bin/python scripts/tool.py --profile paper` then `scripts/tool.py --profile paper`;"
        " `python scripts/tool.py --profil paper`; `scripts/gone.sh`; `vrlib is a package`; `scripts/tool.py`\n"
    )
    assert command_problems(page, project) == [
        "vrlib rank has no --kk: vrlib rank --kk 5",
        "vrlib classroom grade has no --job: vrlib classroom grade S --jobs 2 --job 2",
        "scripts/tool.py is not executable; write `.venv/bin/python scripts/tool.py`: scripts/tool.py --profile paper",
        "scripts/tool.py has no --profil: python scripts/tool.py --profil paper",
        "no file scripts/gone.sh: scripts/gone.sh",
    ]
