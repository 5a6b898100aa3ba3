"""Where the real data files are looked for, how they are downloaded, and the checksums they must have.

One rule, for the command line, the Python API, the notebooks and the scripts alike
(:func:`search_dirs`): files are looked for in ``$VRLIB_DATA_DIR`` when it is set, else in
``../shared/data`` beside the checkout (found from the package's location, not the working
directory), and then in the project's ``data/`` folder; a missing file is downloaded into
``data/`` from its public source, where it has one, when the network allows.  Every
file is checked against its SHA-256 (or, for the full census file, its git blob id)
before it is read.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tempfile
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from vrlib.errors import VrlibError

__all__ = ["DataFile", "FILES", "atomic_write_bytes", "find_file", "search_dirs", "verify"]


@dataclass(frozen=True)
class DataFile:
    """A real file: its name, checksum and public source."""

    name: str
    sha256: str | None
    url: str | None
    member: str | None = None  # path inside the downloaded archive
    git_blob: str | None = None  # alternative check (git hash-object) when no SHA-256 is known


FILES = {
    f.name: f
    for f in [
        DataFile(
            "adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
        ),
        DataFile(
            "adult.test",
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
        ),
        DataFile(
            "cal_housing.data",
            "a2b44dcc7e1c9091b43c4f458b25cbd1f7e8068d08edd26bc4703108d3fa6214",
            # The StatLib archive as scikit-learn fetches it.
            "https://ndownloader.figshare.com/files/5976036",
            member="CaliforniaHousing/cal_housing.data",
        ),
        DataFile(
            "2011 Census Microdata Teaching File.csv",
            None,
            "https://www.ons.gov.uk/file?uri=/census/2011census/2011censusdata/censusmicrodata/"
            "microdatateachingfile/rft-teaching-file.zip",
            member="2011 Census Microdata Teaching File.csv",
            git_blob="7cee9ce199213a9af59f052af6c62bcc0d5250e9",
        ),
        DataFile(
            "uk_census2011_teaching_random10000.csv.gz",
            "f8d1cf2195ee82980e35a80cadd3ccb23fc9bd3c105cdcc0e150589fbf0896e0",
            None,
        ),
        DataFile(
            "uk_census2011_teaching_first50000.csv.gz",
            "5b6b961adba57009d5123d5afca619cb5cf6b898665cf152d61c941b93a75ad2",
            None,
        ),
    ]
}


def project_root() -> Path:
    """The checkout the package was imported from (the folder holding ``vrlib/``)."""
    return Path(__file__).resolve().parents[2]


def project_data_dir() -> Path:
    """The project's own ``data/`` folder (git-ignored apart from its README)."""
    return project_root() / "data"


def shared_data_dir() -> Path:
    """``../shared/data`` beside the checkout, where the README puts the shared data folder."""
    return project_root().parent / "shared" / "data"


def search_dirs() -> list[Path]:
    """Folders searched for data files, in order.

    ``$VRLIB_DATA_DIR`` when it is set, else ``../shared/data`` beside the checkout when
    that folder exists; then the project's ``data/`` (where downloads go).  The same list
    whatever the working directory, so a notebook opened in Jupyter, ``vrlib rank`` and
    ``vrlib.load`` find the same files.
    """
    env = os.environ.get("VRLIB_DATA_DIR")
    if env:
        first = [Path(env).expanduser()]
    else:
        shared = shared_data_dir()
        first = [shared] if shared.is_dir() else []
    return [*first, project_data_dir()]


_verified: set[tuple] = set()  # (path, size, mtime, expected checksum) already checked in this process


def _mismatch(data: bytes, spec: DataFile) -> str | None:
    """None when ``data`` has the checksum of ``spec``, else what was found against what was expected."""
    if spec.sha256 is not None:
        got, want, kind = hashlib.sha256(data).hexdigest(), spec.sha256, "SHA-256"
    elif spec.git_blob is not None:
        got, want, kind = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(), spec.git_blob, "git blob id"
    else:
        return None
    return None if got == want else f"{kind} is {got}, expected {want}"


def _where_to_get(spec: DataFile) -> str:
    if spec.url is None:
        return (
            "this file has no public download: it comes with the project's shared data folder, "
            "so copy it again from there into VRLIB_DATA_DIR (see data/README.md)"
        )
    return f"delete it and fetch it again ({spec.url})"


def verify(path: Path, spec: DataFile) -> None:
    """Raise :class:`VrlibError` unless ``path`` has the checksum of ``spec``."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, spec.sha256, spec.git_blob)
    if key in _verified:
        return
    problem = _mismatch(path.read_bytes(), spec)
    if problem:
        raise VrlibError(
            f"checksum mismatch for {path}: {problem}; the file is corrupt or a different version: "
            + _where_to_get(spec)
        )
    _verified.add(key)


def _where_to_put() -> str:
    """Where a missing file can go: the folder searched first (``VRLIB_DATA_DIR`` when it is set)."""
    env = os.environ.get("VRLIB_DATA_DIR")
    if env:
        return f"copy it into VRLIB_DATA_DIR ({env}), or unset VRLIB_DATA_DIR so that {shared_data_dir()} is searched"
    return f"put the shared data folder at {shared_data_dir()}, or set VRLIB_DATA_DIR to the folder that holds it"


def find_file(name: str, download: bool = True) -> Path:
    """Path of the verified data file ``name``, downloading it when it is missing.

    Raises
    ------
    VrlibError
        When the file is in none of :func:`search_dirs` and cannot be downloaded.
    """
    spec = FILES.get(name)
    if spec is None:
        raise VrlibError(f"unknown data file {name!r}; known files: {sorted(FILES)}")
    for folder in search_dirs():
        path = folder / name
        if path.is_file():
            verify(path, spec)
            return path
    where = " or ".join(str(d) for d in search_dirs())
    env = os.environ.get("VRLIB_DATA_DIR")
    if env and not Path(env).expanduser().is_dir():
        where += f" (VRLIB_DATA_DIR={env!r} is not a folder)"
    if not download or spec.url is None:
        source = (
            "it has no public download: it comes with the project's shared data folder"
            if spec.url is None
            else f"its public source is {spec.url}"
        )
        raise VrlibError(f"data file {name!r} not found in {where}; {_where_to_put()} ({source}; see data/README.md)")
    target = project_data_dir() / name
    try:
        _download(spec, target)
    except OSError as exc:
        # the URL of an archive gives the archive, not the file: say which member to take out of it
        by_hand = f"download it by hand into {target.parent}"
        if spec.member is not None:
            by_hand += f" (the URL gives an archive: take {spec.member!r} out of it, named {name!r})"
        raise VrlibError(
            f"data file {name!r} not found in {where}, and downloading it from {spec.url} failed ({exc}); "
            f"{by_hand}, or {_where_to_put()} (see data/README.md)"
        ) from None
    verify(target, spec)
    return target


def _download(spec: DataFile, target: Path) -> None:
    """Fetch ``spec``, check it, then move it into ``target`` (nothing unchecked or partial ever lands).

    Raises
    ------
    OSError
        When the download or the extraction fails.
    VrlibError
        When the payload does not have the expected checksum (nothing is written).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(spec.url, timeout=30) as response:
        payload = response.read()
    if spec.member is not None:
        payload = _extract(payload, spec.member)
    problem = _mismatch(payload, spec)
    if problem:
        raise VrlibError(
            f"the file downloaded from {spec.url} is not the expected {spec.name!r} ({problem}); "
            f"nothing was saved: the source may have changed, so get {spec.name!r} by hand (see data/README.md) "
            "and put it in VRLIB_DATA_DIR"
        )
    atomic_write_bytes(target, payload)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename:
    readers see the old file or the new one, never half of it; the temporary goes on failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _extract(payload: bytes, member: str) -> bytes:
    """``member`` of a downloaded zip or tar archive; any archive error becomes an OSError."""
    buf = io.BytesIO(payload)
    try:
        if zipfile.is_zipfile(buf):
            with zipfile.ZipFile(buf) as zf:
                names = [n for n in zf.namelist() if n.endswith(member)]
                if not names:
                    raise OSError(f"{member} not in the downloaded archive")
                return zf.read(names[0])
        buf.seek(0)
        with tarfile.open(fileobj=buf) as tf:
            fh = tf.extractfile(member)
            if fh is None:
                raise OSError(f"{member} not in the downloaded archive")
            return fh.read()
    except (zipfile.BadZipFile, tarfile.TarError, KeyError, EOFError, zlib.error, ValueError) as exc:
        raise OSError(f"the downloaded archive could not be read ({type(exc).__name__}: {exc})") from None
