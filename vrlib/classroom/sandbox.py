"""The operating system's sandbox a submission runs in: bubblewrap (``bwrap``).

Each start of a student's process is one ``bwrap`` box with

* new user, PID, network, IPC, UTS and mount namespaces (``--unshare-all``), every
  capability dropped, its own session (``--new-session``: no terminal to inject into), and
  ``--die-with-parent``: when the grader kills ``bwrap`` (or dies), every process of the box
  dies with it, detached ones included (the PID namespace ends with its first process);
* a file system built from nothing: the system's ``/usr`` (and the merged ``/bin``,
  ``/lib``...), Python's installation and the virtual environment, all **read-only**; a
  copy of the ``vrlib`` package in which the withheld references are stubs (so loading
  their file under another name gives the stub too); the data folder read-only when there
  is one; a fresh ``/proc`` (the box's processes only) and ``/dev``; and a private,
  size-capped, writable ``tmpfs`` as home, working directory and ``/tmp`` holding the
  submission's own notebook only (and a small ``/dev/shm``); the rest of the box, its root
  and ``/dev`` included, is read-only.  The solutions, the other submissions, the gradebook
  and the grader's files are not in it;
* an environment made from an allow-list (``--clearenv``): nothing of the grader's
  (tokens, keys) reaches the student's code;
* a seccomp filter (``--seccomp``, :func:`seccomp_program`) refusing the kernel's key store
  (``add_key``, ``request_key``, ``keyctl``), which no namespace separates: a box inherits the
  grader's session keyring, and a key added in one box was read by the next;
* resource limits set inside before any student code runs (see
  :func:`vrlib.classroom.fence.apply_limits`): address space, CPU time, file size,
  processes (``RLIMIT_NPROC``, which Linux does not apply to the system's root; when the
  grader runs as root a ``pids`` control group caps the box instead where one can be made).

What it does not do is listed on the teacher's page (``notebooks/assignments/README.md``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import os
import shutil
import sys
import uuid
from pathlib import Path

from vrlib.errors import VrlibError

__all__ = [
    "SandboxUnavailable",
    "bwrap_path",
    "require_bwrap",
    "box_command",
    "prepare_library",
    "PidsGroup",
    "seccomp_program",
]

HOME = "/home/student"  # the box's writable scratch folder (tmpfs)
LIBRARY = "/opt/vrlib"  # the box's copy of the vrlib package (read-only)
DATA = "/opt/vrlib-data"  # the data folder (read-only), when the grader has one
SHM_SIZE = 64 * 2**20  # bytes of the box's /dev/shm
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "alternatives")


class SandboxUnavailable(VrlibError):
    """bubblewrap is missing or cannot make a box on this machine."""


def bwrap_path() -> str | None:
    """The ``bwrap`` program (``$VRLIB_BWRAP`` first, then ``PATH``), or None."""
    chosen = os.environ.get("VRLIB_BWRAP")
    if chosen is not None:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def _works(program: str) -> str:
    """'' when ``program`` makes a box here, else why not."""
    import subprocess

    try:
        done = subprocess.run(
            [program, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "true"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    return done.stderr.decode("utf-8", "replace").strip()[:300] or f"exit status {done.returncode}"


@functools.lru_cache(maxsize=None)
def _supports(program: str, option: str) -> bool:
    import subprocess

    try:
        done = subprocess.run([program, "--help"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option.encode() in done.stdout + done.stderr


def require_bwrap() -> str:
    """The ``bwrap`` program, checked to make a box; a :class:`SandboxUnavailable` saying what to do otherwise."""
    program = bwrap_path()
    if program is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed: the grader runs each submission in a bwrap sandbox. "
            "Install Debian's 'bubblewrap' package (apt-get install bubblewrap; scripts/setup_env.sh does it "
            "as root), or pass --no-sandbox (sandbox=False) only for code you trust"
        )
    why = _works(program)
    if why:
        raise SandboxUnavailable(
            f"bubblewrap ({program}) cannot make a sandbox on this machine ({why}); user namespaces may be "
            "disabled (sysctl kernel.unprivileged_userns_clone, or a container without them). "
            "Grade on a machine where `bwrap --unshare-all --ro-bind / / true` works, "
            "or pass --no-sandbox only for code you trust"
        )
    return program


def _system_binds() -> list[str]:
    args: list[str] = []
    for top in _SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # Python itself and the virtual environment, where they are (a venv's paths are absolute).
    seen = {"/usr"}
    for prefix in (sys.base_prefix, sys.prefix, os.path.realpath(sys.prefix)):
        real = os.path.realpath(prefix)
        if not any(real == s or real.startswith(s + "/") for s in seen):
            args += ["--ro-bind", real, real]
            seen.add(real)
        if prefix != real and prefix not in seen:
            args += ["--symlink", real, prefix]
            seen.add(prefix)
    return args


def box_command(
    argv: list[str],
    env: dict[str, str],
    scratch_size: int,
    library: Path,
    files: dict[str, int] | None = None,
    data_dir: str | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in a box (see the module's description).

    Parameters
    ----------
    argv : list of str
        The command, as seen inside the box.
    env : dict
        The box's whole environment (nothing else is passed).
    scratch_size : int
        Bytes of the writable ``tmpfs`` (home and ``/tmp``).
    library : Path
        Folder holding the ``vrlib`` package copy, mounted read-only at ``/opt/vrlib``.
    files : dict, optional
        Files to put into the scratch folder: name -> an open file descriptor to copy from.
    data_dir : str, optional
        The data folder, mounted read-only.
    seccomp_fd : int, optional
        An open file holding :func:`seccomp_program`, the system calls the box refuses.
    """
    args = [require_bwrap(), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--hostname", "sandbox"]
    if _supports(args[0], "--disable-userns"):  # bwrap >= 0.8: no user namespace inside the box either
        args += ["--disable-userns"]
    args += _system_binds()
    args += ["--ro-bind", str(library), LIBRARY]
    if data_dir and os.path.isdir(data_dir):
        args += ["--ro-bind", data_dir, DATA]
    # /dev and the box's root are tmpfs without a size: read-only, so that only the sized scratch folder
    # (and a small /dev/shm, for semaphores) can hold what the student's code writes.
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(SHM_SIZE), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    args += ["--size", str(int(scratch_size)), "--tmpfs", HOME, "--symlink", HOME, "/tmp"]
    for name, fd in (files or {}).items():
        args += ["--perms", "0644", "--file", str(fd), f"{HOME}/{name}"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--remount-ro", "/", "--chdir", HOME, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--", *argv]


# --------------------------------------------------------------------------- system calls the box refuses

# The kernel's key store (add_key, request_key, keyctl) is not in any namespace bwrap makes: a box
# inherits the grader's session keyring (a login through pam_keyinit, a systemd service), so a key
# added in one box was read by the next, the hidden tests' inputs with it, and stayed in the
# teacher's keyring after grading; request_key can also make the kernel run a helper outside the box.
# Numbers: (AUDIT_ARCH, {syscall numbers}) per architecture, its 32-bit compatibility one beside it.
_REFUSED_CALLS = {
    "x86_64": ((0xC000003E, (248, 249, 250)), (0x40000003, (286, 287, 288))),
    "aarch64": ((0xC00000B7, (217, 218, 219)), (0x40000028, (309, 310, 311))),
}
_X32_BIT = 0x40000000  # x86_64's x32 calls: the same numbers with this bit; the box refuses them all


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The seccomp filter (classic BPF) a box runs under, for ``bwrap --seccomp``; None on other machines.

    It refuses (``EPERM``) the kernel key store's calls (``add_key``, ``request_key``, ``keyctl``),
    under every calling convention of the architecture, and allows everything else.
    """
    import platform
    import struct

    arches = _REFUSED_CALLS.get(machine or platform.machine())
    if arches is None:
        return None
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    blocks = []
    for arch, numbers in arches:
        checks = ([(jge, _X32_BIT)] if arch == 0xC000003E else []) + [(jeq, n) for n in numbers]
        blocks.append((arch, checks))
    # layout: ld arch; per block: jeq arch (else next block); ld nr; checks (-> deny); ret allow; ... ret allow; deny
    code: list[tuple[int, int, int, int]] = [(ld, 0, 0, 4)]
    pending: list[tuple[int, str]] = []  # (index, what) of jumps to fix once the deny's place is known
    for arch, checks in blocks:
        code.append((jeq, 0, len(checks) + 2, arch))  # not this architecture: skip ld, checks and ret
        code.append((ld, 0, 0, 0))
        for op, k in checks:
            pending.append((len(code), "deny"))
            code.append((op, 0, 0, k))
        code.append((ret, 0, 0, allow))
    code.append((ret, 0, 0, allow))  # an architecture not listed (none runs in the box)
    deny_at = len(code)
    code.append((ret, 0, 0, deny))
    for i, _ in pending:
        op, _, jf, k = code[i]
        code[i] = (op, deny_at - i - 1, jf, k)
    return b"".join(struct.pack("=HBBI", *ins) for ins in code)


def box_env(extra: dict[str, str], data_dir: str | None) -> dict[str, str]:
    """The allow-listed environment of a box: paths, locale, thread counts, and ``extra``."""
    bin_dir = os.path.dirname(sys.executable)
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": HOME,
        "TMPDIR": HOME,
        "USER": "student",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": LIBRARY,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONUNBUFFERED": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{HOME}/.mpl",
        "XDG_CACHE_HOME": f"{HOME}/.cache",
        "NUMBA_CACHE_DIR": f"{HOME}/.numba",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
    }
    if data_dir and os.path.isdir(data_dir):
        env["VRLIB_DATA_DIR"] = DATA
    env.update(extra)
    return env


# --------------------------------------------------------------------------- the box's vrlib


def _package_root() -> Path:
    import vrlib

    return Path(vrlib.__file__).resolve().parent


def _stub_source(text: str, qualname: str, lineno: int, spec: str) -> str:
    """``text`` with the body of the top-level def/class ``qualname`` (at ``lineno``) replaced by a raise."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == qualname:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if lineno not in (first, node.lineno):
                continue
            lines = text.splitlines(keepends=True)
            body_start, body_end = node.body[0].lineno, node.end_lineno
            indent = " " * node.body[0].col_offset
            message = f"{spec} is withheld while your answer is graded: write the answer yourself"
            stub = (
                f"{indent}raise RuntimeError({message!r})\n"
                if not isinstance(node, ast.ClassDef)
                else f"{indent}def __init__(self, *args, **kwargs):\n{indent}    raise RuntimeError({message!r})\n"
            )
            return "".join(lines[: body_start - 1]) + stub + "".join(lines[body_end:])
    raise VrlibError(f"cannot find the definition of the withheld {spec} in its file")


def prepare_library(dest: Path, withheld=()) -> Path:
    """Copy the ``vrlib`` package into ``dest/vrlib`` with each withheld reference (``module:name``) a stub.

    The definition itself is rewritten (in whichever vrlib file it is), so every way to reach
    it in the box (a re-export, ``importlib`` on its file under another name) finds the stub.
    Returns ``dest``.
    """
    root = _package_root()
    target = Path(dest) / "vrlib"
    # __pycache__ comes along: copy2 keeps the sources' times, so their bytecode stays valid (stubs get new)
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("*.so.tmp"))
    edits: dict[Path, list[tuple[str, int, str]]] = {}
    for spec in withheld:
        module_name, _, name = str(spec).partition(":")
        if not module_name.startswith("vrlib") or not name:
            raise VrlibError(f"withheld reference {spec!r}: write 'vrlib.module:name'")
        try:
            obj = inspect.unwrap(getattr(importlib.import_module(module_name), name))
            path = Path(inspect.getsourcefile(obj)).resolve()
            _, lineno = inspect.getsourcelines(obj)
        except (ImportError, AttributeError, TypeError, OSError) as exc:
            raise VrlibError(f"withheld reference {spec!r} cannot be found ({exc})") from None
        if root not in path.parents:
            raise VrlibError(
                f"withheld reference {spec!r} is defined outside vrlib ({path.name}); withhold vrlib's own"
            )
        edits.setdefault(target / path.relative_to(root), []).append((obj.__name__, lineno, spec))
    for path, items in edits.items():
        text = path.read_text(encoding="utf-8")
        for qualname, lineno, spec in sorted(items, key=lambda x: -x[1]):  # bottom first: line numbers hold
            text = _stub_source(text, qualname, lineno, spec)
        path.write_text(text, encoding="utf-8")
        for stale in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            stale.unlink()  # the original's bytecode must never stand for the stub
    # Bytecode for what changed (or had none), once here, not at each start of a box (its copy is read-only).
    import compileall

    compileall.compile_dir(target, quiet=2, workers=1)
    return Path(dest)


# --------------------------------------------------------------------------- processes, when the grader is root


class PidsGroup:
    """A ``pids`` control group capping a box's processes (used when the grader runs as root).

    ``RLIMIT_NPROC`` does not apply to processes of the system's root user, which a box's
    processes are when the grader runs as root; a control group does.  Best effort: where
    none can be made (no writable cgroup file system), :attr:`path` is None and the box
    relies on its time limits and on being killed whole.
    """

    def __init__(self, limit: int):
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if not (base / "cgroup.procs").exists():
                continue
            if base == Path("/sys/fs/cgroup") and "pids" not in _read(base / "cgroup.subtree_control"):
                continue
            _sweep(base)
            path = base / f"vrlib-grade-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(int(limit)))
            except OSError:
                try:
                    path.rmdir()
                except OSError:
                    pass
                continue
            self.path = path
            return

    def enter(self) -> None:
        """Move the calling process into the group (from a ``preexec_fn``: the box is born in it)."""
        if self.path is not None:
            with open(self.path / "cgroup.procs", "w") as f:
                f.write("0")

    def kill_all(self) -> None:
        """Kill every process left in the group (the box's, wherever they went)."""
        if self.path is None:
            return
        import signal
        import time

        for _ in range(50):
            pids = [int(p) for p in _read(self.path / "cgroup.procs").split() if p.strip().isdigit()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        """Remove the group (once its processes are gone)."""
        if self.path is None:
            return
        import time

        for _ in range(100):  # the kernel lets go of a group a moment after its last process exits
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill_all()
                time.sleep(0.02)


def _sweep(base: Path) -> None:
    """Remove the empty groups a grading process that was killed left behind (older than a minute)."""
    import time

    for stale in base.glob("vrlib-grade-*"):
        try:
            if time.time() - stale.stat().st_mtime > 60 and not _read(stale / "cgroup.procs").strip():
                stale.rmdir()
        except OSError:
            pass


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
