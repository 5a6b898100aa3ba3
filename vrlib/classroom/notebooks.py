"""Assignment notebooks: reading them, their nbgrader metadata, the student release, the checksums.

The solution notebooks under ``notebooks/assignments/`` follow nbgrader's conventions
exactly (cell metadata ``nbgrader`` with ``solution`` / ``grade`` / ``locked`` /
``points`` / ``grade_id``; solution regions ``### BEGIN SOLUTION`` / ``### END
SOLUTION``; hidden tests ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``), so a
course that runs nbgrader itself can use them as its ``source/`` notebooks unchanged.

:func:`generate` writes the student versions with nbgrader's own preprocessors, in the
order of ``nbgrader generate_assignment`` (less its gradebook database): cells locked,
solutions replaced by a stub that raises ``NotImplementedError``, outputs cleared,
checksums, hidden tests removed.  Same input, same bytes.  It also writes
``SHA256SUMS`` beside the solution notebooks, which the grader checks before it
trusts a solution notebook (:func:`check_sums`).
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import nbformat

from vrlib.errors import VrlibError

__all__ = [
    "ASSIGNMENTS_DIR",
    "PATTERN",
    "SUMS",
    "assignments",
    "read",
    "read_submission",
    "MAX_NOTEBOOK_BYTES",
    "MAX_NOTEBOOK_CONTAINERS",
    "release",
    "generate",
    "write_sums",
    "check_sums",
    "meta",
    "is_test",
    "is_solution",
    "is_locked",
    "solution_names",
    "sha256",
    "solution_sources",
    "fill_solutions",
]

# Where the solution notebooks live, relative to the project root; release/ beside them.
ASSIGNMENTS_DIR = Path("notebooks") / "assignments"
PATTERN = "[0-9][0-9]_*.ipynb"
SUMS = "SHA256SUMS"
# A submission is parsed in the grader: bounded before parsing.  nbformat builds a node per JSON
# object (about 500 bytes each), so a 30 MB file of empty objects took 5 GB and 80 s; a real
# notebook holds a few hundred (plots are base64 strings, not objects).
MAX_NOTEBOOK_BYTES = 32 * 2**20
MAX_NOTEBOOK_CONTAINERS = 100_000  # JSON objects and arrays, counted as their opening brackets (an upper bound)


def project_root() -> Path:
    """The folder of the checkout ``vrlib`` is installed from."""
    return Path(__file__).resolve().parents[2]


def default_source_dir() -> Path:
    """``notebooks/assignments`` of the project."""
    return project_root() / ASSIGNMENTS_DIR


def assignments(source_dir=None) -> list[Path]:
    """The solution notebooks (``NN_*.ipynb``) of ``source_dir`` (default ``notebooks/assignments``)."""
    source_dir = Path(source_dir) if source_dir is not None else default_source_dir()
    found = sorted(source_dir.glob(PATTERN))
    if not found:
        raise VrlibError(f"no assignment notebooks ({PATTERN}) in {source_dir}")
    return found


def read(path) -> nbformat.NotebookNode:
    """Read a notebook, with a :class:`VrlibError` saying why when it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise VrlibError(f"{path} does not exist")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several kinds for a file that is not a notebook
        raise VrlibError(f"{path} is not a readable Jupyter notebook ({type(exc).__name__}: {exc})") from None


def read_submission(path) -> tuple[nbformat.NotebookNode, bytes]:
    """Read a student's notebook, untrusted: the notebook and the exact bytes it was read from.

    Refused, with a :class:`VrlibError` saying why: a symbolic link (it could name the solution
    or a classmate's notebook, which the grader can read and the student cannot), anything
    but a regular file, a file over :data:`MAX_NOTEBOOK_BYTES` or with more than
    :data:`MAX_NOTEBOOK_CONTAINERS` JSON objects and arrays (checked before parsing), and a
    notebook whose cells are not the shape the grader reads (:func:`check_structure`).
    The file is opened once (``O_NOFOLLOW``): what was checked is what is graded.
    """
    import os
    import stat

    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise VrlibError(f"{path} is a symbolic link; hand in the notebook itself") from None
        raise VrlibError(f"{path} cannot be opened ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise VrlibError(f"{path} is not a regular file")
        if st.st_size > MAX_NOTEBOOK_BYTES:
            raise VrlibError(f"{path} is too large to grade ({st.st_size} bytes, over {MAX_NOTEBOOK_BYTES})")
        data = f.read(MAX_NOTEBOOK_BYTES + 1)
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise VrlibError(f"{path} is too large to grade (over {MAX_NOTEBOOK_BYTES} bytes)")
    containers = data.count(b"{") + data.count(b"[")
    if containers > MAX_NOTEBOOK_CONTAINERS:
        raise VrlibError(f"{path} holds too many JSON objects to grade ({containers}, over {MAX_NOTEBOOK_CONTAINERS})")
    try:
        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)  # a byte-order mark is not a fault
    except Exception as exc:  # nbformat raises several kinds for a file that is not a notebook
        raise VrlibError(f"{path} is not a readable Jupyter notebook ({type(exc).__name__}: {exc})") from None
    check_structure(nb, path)
    return nb, data


def check_structure(nb, path="the notebook") -> None:
    """A :class:`VrlibError` unless ``nb`` has the shape the grader reads: a list of cells, each an
    object with a known ``cell_type``, a text ``source`` and an object ``metadata``."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not isinstance(nb.get("metadata", {}), dict):
        raise VrlibError(f"{path} is not a valid notebook (no list of cells)")
    for i, cell in enumerate(cells):
        ok = (
            isinstance(cell, dict)
            and cell.get("cell_type") in ("code", "markdown", "raw")
            and isinstance(cell.get("source", ""), str)
            and isinstance(cell.get("metadata", {}), dict)
            and isinstance(cell.get("outputs", []), list)
        )
        if not ok:
            raise VrlibError(f"{path} is not a valid notebook (cell {i + 1} is malformed)")


def meta(cell) -> dict:
    """The cell's ``nbgrader`` metadata (empty when it has none)."""
    value = cell.get("metadata", {}).get("nbgrader", {})
    return value if isinstance(value, dict) else {}


def is_test(cell) -> bool:
    """An autograded test cell: graded code that is not a solution."""
    m = meta(cell)
    return bool(m.get("grade")) and not m.get("solution") and cell.get("cell_type") == "code"


def is_solution(cell) -> bool:
    """A code cell the student writes."""
    return bool(meta(cell).get("solution")) and cell.get("cell_type") == "code"


def is_locked(cell) -> bool:
    """A read-only cell written by the teacher (not a solution, not a test)."""
    m = meta(cell)
    return bool(m.get("locked")) and not m.get("solution") and not is_test(cell)


def solution_sources(nb) -> dict[str, str]:
    """The source of every solution cell of ``nb``, by its ``grade_id``."""
    return {meta(c)["grade_id"]: c.source for c in nb.cells if meta(c).get("solution")}


def fill_solutions(nb, answers: dict) -> nbformat.NotebookNode:
    """Write ``answers`` (source by ``grade_id``) into the solution cells of ``nb`` they name; returns ``nb``."""
    for cell in nb.cells:
        gid = meta(cell).get("grade_id")
        if gid in answers and meta(cell).get("solution"):
            cell.source = answers[gid]
    return nb


def solution_names(nb) -> list[str]:
    """The top-level names the solution cells of ``nb`` define (the functions the student writes)."""
    names: list[str] = []
    for cell in nb.cells:
        if not is_solution(cell):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
            elif isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return list(dict.fromkeys(names))


def release(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of a solution notebook (a new notebook; ``nb`` is left as it was).

    Runs nbgrader's preprocessors in the order of ``nbgrader generate_assignment``,
    without the ones that need its database or a course header.
    """
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearHiddenTests,
        ClearMarkScheme,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    out = nbformat.from_dict(nbformat.reader.reads(nbformat.writes(nb)))  # a deep copy
    resources: dict = {}
    steps = [
        LockCells,
        ClearSolutions,
        ClearOutput,
        CheckCellMetadata,
        ComputeChecksums,
        ClearHiddenTests,
        ClearMarkScheme,
        ComputeChecksums,
        CheckCellMetadata,
    ]
    for step in steps:
        out, resources = step().preprocess(out, resources)
    return out


def sha256(path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:  # in blocks: a huge file costs time, not memory
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_sums(source_dir) -> Path:
    """Write ``SHA256SUMS`` (``sha256sum`` format) of the solution notebooks of ``source_dir``."""
    source_dir = Path(source_dir)
    lines = [f"{sha256(p)}  {p.name}\n" for p in assignments(source_dir)]
    target = source_dir / SUMS
    target.write_text("".join(lines), encoding="utf-8")
    return target


def check_sums(path) -> str:
    """Check a solution notebook against the ``SHA256SUMS`` beside it; return its hash.

    Raises
    ------
    VrlibError
        When ``SHA256SUMS`` is missing, does not list the notebook, or lists another hash
        (the notebook changed since ``vrlib classroom generate``: regenerate, or restore it).
    """
    path = Path(path)
    sums = path.parent / SUMS
    if not sums.is_file():
        raise VrlibError(f"{sums} is missing: run `vrlib classroom generate` to write the solutions' checksums")
    listed = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2:
            listed[parts[1].lstrip("*")] = parts[0]
    if path.name not in listed:
        raise VrlibError(f"{sums} does not list {path.name}: run `vrlib classroom generate`")
    digest = sha256(path)
    if digest != listed[path.name]:
        raise VrlibError(
            f"{path} differs from its checksum in {sums}: it changed after `vrlib classroom generate` "
            "(restore it from version control, or regenerate if the change is yours)"
        )
    return digest


def generate(source_dir=None, release_dir=None) -> list[Path]:
    """Write the student version of every solution notebook into ``release_dir``, and ``SHA256SUMS``.

    Parameters
    ----------
    source_dir : path, optional
        Default ``notebooks/assignments`` of the project.
    release_dir : path, optional
        Default ``<source_dir>/release``.  Student versions of notebooks no longer in
        ``source_dir`` are removed, so the folder always mirrors the sources.

    Returns
    -------
    list of Path
        The student versions written (``SHA256SUMS`` goes into ``source_dir``).
    """
    sources = assignments(source_dir)
    release_dir = Path(release_dir) if release_dir is not None else sources[0].parent / "release"
    release_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sources:
        target = release_dir / path.name
        text = nbformat.writes(release(read(path)))
        if not text.endswith("\n"):
            text += "\n"
        target.write_text(text, encoding="utf-8")
        written.append(target)
    names = {p.name for p in sources}
    for stale in release_dir.glob(PATTERN):
        if stale.name not in names:
            stale.unlink()
    write_sums(sources[0].parent)
    return written
