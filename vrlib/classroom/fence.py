"""Run a student's code in a separate process, in a sandbox, and talk to it.

The grader never runs a submission's code in its own process.  A :class:`Fence` starts
``python -m vrlib.classroom._student``, by default inside a bubblewrap box
(:mod:`vrlib.classroom.sandbox`: its own namespaces, a read-only system, a private
scratch folder, an allow-listed environment, killed whole when grading ends), with

* a **time cap**: every request (run a cell, call a function) has a deadline; past it
  the box is killed (an interrupt a loop could swallow is not relied on);
* an **output cap**: ``print`` output beyond ``output_cap`` bytes is dropped (and
  reported as truncated); the files behind stdout and stderr cannot grow beyond
  ``FILE_CAP`` bytes (``RLIMIT_FSIZE``), and the grader reads at most ``output_cap``;
* **resource limits** set before any student code runs (soft and hard, so the student
  cannot raise them): address space, CPU time, file size, processes.

Without the sandbox (``sandbox=False``, for code the teacher trusts) the process runs
as the grader's user, fenced only by an audit hook (:func:`sys.addaudithook`) that
refuses opening the folders named in ``hidden``, writing outside the scratch folder,
starting programs and signalling other processes: a fence against accidents, **not a
security boundary** (the standard library walks around audit hooks).

Requests go to the student's process as length-prefixed pickles (the grader's data);
replies come back in the typed, bounded format of :mod:`vrlib.classroom.wire` (JSON and
``.npy``, never unpickled), their size checked before they are read.  A callback (the
student's code asking the grader for a reference a test put in place of one of its
functions) runs the reference on the student's arguments in a fork of the grader, capped
like the student's process and killed at the deadline (:func:`_capped_call`).  The printed
output kept on the grader's disk is ``output_cap`` per stream over all restarts.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

from vrlib.errors import VrlibError

__all__ = ["Fence", "StudentError", "StudentTimeout", "StudentDied", "plain", "loads_untrusted", "parse_size"]

FILE_CAP = 64 * 2**20  # bytes any file the student's process writes may reach (RLIMIT_FSIZE)
MESSAGE_CAP = 256 * 2**20  # bytes of one message from the student's process, checked before it is read
SCRATCH_CAP = 256 * 2**20  # bytes of the box's writable scratch folder (tmpfs)
PROCESS_CAP = 64  # processes (and threads) of one box
_HEADER = struct.Struct("<Q")


class StudentError(Exception):
    """The student's code raised; ``args[0]`` is one line saying what (``Type: message``)."""


class StudentTimeout(Exception):
    """The student's code ran past its deadline and its process was stopped."""


class StudentDied(Exception):
    """The student's process ended (exit, signal, memory) while running the student's code."""


def parse_size(text) -> int:
    """Bytes from ``"4G"``, ``"512M"``, ``"100k"`` or a plain number of bytes."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip().upper().removesuffix("B")
        scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(s[-1:], 1)
        try:
            value = int(float(s[:-1] if scale > 1 else s) * scale)
        except ValueError:
            raise VrlibError(f"cannot read the size {text!r}: write e.g. 4G, 512M or 100k") from None
    if value <= 0:
        raise VrlibError(f"a size must be positive, got {text!r}")
    return value


# --------------------------------------------------------------------------- messages


def send(fd: int, obj, deadline: float | None = None) -> None:
    """Write one message (a pickle, length first) to ``fd``, by ``deadline`` (:class:`StudentTimeout` past it).

    With a deadline ``fd`` must be non-blocking: a student's process that stops reading its
    channel then costs its own time limit, never a grader stuck in a write.
    """
    import select

    data = pickle.dumps(obj, protocol=5)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise StudentTimeout()
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[n:]


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to the blocking descriptor ``fd`` (``os.write`` may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send_reply(fd: int, obj) -> None:
    """Write one reply of the student's process to ``fd`` (:mod:`vrlib.classroom.wire`, length first)."""
    from vrlib.classroom import wire

    data = wire.encode(obj)
    write_all(fd, _HEADER.pack(len(data)) + data)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    import select

    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StudentTimeout()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise StudentTimeout()
        chunk = os.read(fd, min(n - got, 2**20))
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive_bytes(fd: int, deadline: float | None = None) -> bytes:
    """Read one message's bytes from ``fd`` (``EOFError`` when closed, :class:`StudentTimeout` past ``deadline``)."""
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MESSAGE_CAP:
        raise StudentError(f"the answer is too large to grade ({size} bytes)")
    return _read_exact(fd, size, deadline)


def loads_untrusted(data: bytes):
    """Read a reply of the student's process: plain data and numpy arrays only, never unpickled."""
    from vrlib.classroom import wire

    try:
        return wire.decode(data)
    except wire.WireError as exc:
        raise StudentError(f"the student's process sent something the grader cannot read ({exc})") from None


def plain(value, depth: int = 0):
    """``value`` as plain data the grader accepts: builtins, lists, tuples, dicts and numpy arrays.

    Anything array-like (pandas objects, subclasses of ndarray) becomes a numpy array;
    subclasses of the builtins become the builtin.  Runs in the student's process.
    """
    import numpy as np

    if depth > 50:
        raise TypeError("the value is nested too deeply")
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return value
    for base in (bool, int, float, complex, str, bytes):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        kind = {list: list, tuple: tuple, set: set, frozenset: frozenset}
        out = [plain(v, depth + 1) for v in value]
        for base, make in kind.items():
            if isinstance(value, base):
                return make(out)
    if isinstance(value, dict):
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, np.generic):
        return np.asarray(value)[()] if not isinstance(value, np.object_) else plain(value.item(), depth + 1)
    try:
        arr = np.array(value, subok=False)
    except Exception as exc:
        raise TypeError(f"cannot turn a {type(value).__name__} into an array ({exc})") from None
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr).view(np.ndarray)
    if arr.dtype.hasobject:
        flat = [plain(v, depth + 1) for v in arr.ravel()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        arr = out.reshape(arr.shape)
    return arr


# --------------------------------------------------------------------------- the fence


class Fence:
    """One student's process: run cells in it, call its functions, stop it.

    Parameters
    ----------
    scratch : path
        The grader's private folder for this process: its printed output (and, without
        the sandbox, the student's working directory, the only one it may write to).
    hidden : list of path
        Without the sandbox: folders the student's code may not open or list.
    memory_cap : int
        Bytes of address space (``RLIMIT_AS``) of each process of the student's.
    output_cap : int
        Bytes of printed output kept; the rest is dropped.
    withheld : list of str
        References (``"module:name"``) the student's code finds replaced by a stub, so that an
        answer cannot simply call vrlib's implementation of the question.
    sandbox : bool
        Run in a bubblewrap box (default); False only for code the teacher trusts.
    library : path, optional
        With the sandbox: the box's copy of vrlib (:func:`vrlib.classroom.sandbox.prepare_library`).
    submission : path, optional
        With the sandbox: the notebook copied into the box's scratch folder.
    cpu_cap : float, optional
        CPU seconds of each process of the student's (``RLIMIT_CPU``).
    """

    def __init__(
        self,
        scratch,
        hidden=(),
        memory_cap: int = 4 * 2**30,
        output_cap: int = 100_000,
        withheld=(),
        sandbox: bool = False,
        library=None,
        submission=None,
        cpu_cap: float | None = None,
    ):
        self.scratch = Path(scratch).resolve()
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.hidden = [str(Path(h).resolve()) for h in hidden]
        self.memory_cap, self.output_cap, self.withheld = int(memory_cap), int(output_cap), list(withheld)
        self.sandbox, self.library, self.submission = bool(sandbox), library, submission
        self.cpu_cap = None if cpu_cap is None or cpu_cap == float("inf") else int(max(1, cpu_cap))
        if self.sandbox and library is None:
            raise ValueError("a sandboxed Fence needs the box's library (prepare_library)")
        self.proc: subprocess.Popen | None = None
        self.pids = None
        self._starts = 0

    # ----------------------------------------------------------------- process

    def start(self, deadline: float) -> None:
        """Start the student's process and wait until it is ready (it imports nothing of the student's)."""
        self.stop()
        self._starts += 1
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        config = {
            "read_fd": to_child_r,
            "write_fd": from_child_w,
            "sandboxed": self.sandbox,
            "hidden": self.hidden,
            "memory_cap": self.memory_cap,
            "output_cap": self.output_cap,
            "file_cap": FILE_CAP,
            "cpu_cap": self.cpu_cap,
            "process_cap": PROCESS_CAP,
            "withheld": self.withheld,
        }
        n = self._starts
        self._out = open(self.scratch / f".stdout-{n}", "wb")
        self._err = open(self.scratch / f".stderr-{n}", "wb")
        extra_fds: list[int] = []
        try:
            if self.sandbox:
                command, env, cwd, preexec = self._box(config, extra_fds)
            else:
                command, env, cwd, preexec = self._plain(config)
            self.proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._out,
                stderr=self._err,
                pass_fds=(to_child_r, from_child_w, *extra_fds),
                start_new_session=True,
                preexec_fn=preexec,
            )
        except BaseException:
            for fd in (to_child_w, from_child_r):
                os.close(fd)
            self._out.close()
            self._err.close()
            raise
        finally:
            for fd in (to_child_r, from_child_w, *extra_fds):
                os.close(fd)
        self._to, self._from = to_child_w, from_child_r
        os.set_blocking(self._to, False)  # writes to the student's process have deadlines too
        reply = self._wait(deadline)
        if reply[0] != "ready":
            self.stop()
            raise StudentDied(f"the student's process did not start: {reply}")

    def _box(self, config: dict, extra_fds: list):
        from vrlib.classroom import sandbox

        config["scratch"] = sandbox.HOME
        data_dir = os.environ.get("VRLIB_DATA_DIR")
        data_dir = os.path.abspath(data_dir) if data_dir else None
        env = sandbox.box_env({"VRLIB_STUDENT_CONFIG": _json(config)}, data_dir)
        files = {}
        if self.submission is not None:
            fd = os.open(self.submission, os.O_RDONLY)
            extra_fds.append(fd)
            files["submission.ipynb"] = fd
        program = sandbox.seccomp_program()
        seccomp_fd = None
        if program is not None:  # read by bwrap from a file of its own
            seccomp_fd = os.memfd_create("vrlib-seccomp", os.MFD_CLOEXEC)
            extra_fds.append(seccomp_fd)
            os.write(seccomp_fd, program)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
        command = sandbox.box_command(
            [sys.executable, "-m", "vrlib.classroom._student"],
            env,
            SCRATCH_CAP,
            Path(self.library),
            files,
            data_dir,
            seccomp_fd,
        )
        if self.pids is None:
            self.pids = sandbox.PidsGroup(PROCESS_CAP)
        # bwrap's own environment is not the grader's either: its process in the box (PID 1) shows it in /proc/1/environ
        bare = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
        return command, bare, str(self.scratch), (self.pids.enter if self.pids.path is not None else None)

    def _plain(self, config: dict):
        scratch = self.scratch / "work"
        scratch.mkdir(exist_ok=True)
        config["scratch"] = str(scratch)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "JUPYTER_TOKEN"))}
        data_dir = env.get("VRLIB_DATA_DIR")
        if data_dir and not os.path.isabs(data_dir):
            env["VRLIB_DATA_DIR"] = os.path.abspath(data_dir)
        import vrlib

        here = str(Path(vrlib.__file__).resolve().parents[1])  # the student's process runs this same vrlib
        env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.update(
            {
                "PYTHONDONTWRITEBYTECODE": "1",
                "MPLBACKEND": "Agg",
                "MPLCONFIGDIR": str(scratch / ".mpl"),
                "XDG_CACHE_HOME": str(scratch / ".cache"),
                "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
                "MALLOC_ARENA_MAX": "2",
                "PYTHONUNBUFFERED": "1",
                "TMPDIR": str(scratch),
                "HOME": str(scratch),
                "VRLIB_STUDENT_CONFIG": _json(config),
            }
        )
        return [sys.executable, "-m", "vrlib.classroom._student"], env, str(scratch), None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Kill the student's process group (if running) and close the channel."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # bwrap: its box (a PID namespace) dies with it
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.pids is not None:
            self.pids.kill_all()
        for fd in (self._to, self._from):
            try:
                os.close(fd)
            except OSError:
                pass
        for f in (self._out, self._err):
            f.close()
        self.proc = None
        self._trim()

    def mark(self) -> tuple[int, dict, dict]:
        """Where the output stands now, and the grader's copy of what it shows so far (for :meth:`forget_since`).

        The copy is the first ``output_cap + 1`` bytes of each current file, all that
        :meth:`output` ever reads of them.
        """
        sizes, kept = {}, {}
        for kind in ("stdout", "stderr"):
            path = self.scratch / f".{kind}-{self._starts}"
            try:
                sizes[path] = path.stat().st_size
                with open(path, "rb") as f:
                    kept[path] = f.read(min(sizes[path], self.output_cap + 1))
            except OSError:
                sizes[path], kept[path] = 0, b""
        return self._starts, sizes, kept

    def forget_since(self, mark: tuple[int, dict, dict]) -> None:
        """Stop the process and drop what it printed since ``mark``: its state and output go together.

        The current files get back the grader's copy of what they held at ``mark``, not what is
        in them now: the process holds them open for writing, so it could go back (``lseek``,
        ``pwrite``, ``ftruncate``) and write over what it printed before the mark.
        """
        self.stop()
        starts, sizes, kept = mark
        for kind in ("stdout", "stderr"):
            for path in self._files(kind):
                number = int(path.name.rsplit("-", 1)[1])
                try:
                    if number == starts:
                        with open(path, "r+b") as f:
                            f.truncate(0)
                            f.write(kept.get(path, b""))
                    elif number > starts and path.stat().st_size > 0:
                        os.truncate(path, 0)
                except OSError:
                    pass

    def _files(self, kind: str) -> list[Path]:
        """The output files of ``kind`` (stdout, stderr), in the order the processes started."""
        found = self.scratch.glob(f".{kind}-*")
        found = [p for p in found if p.name.rsplit("-", 1)[1].isdigit()]
        return sorted(found, key=lambda p: int(p.name.rsplit("-", 1)[1]))

    def _trim(self) -> None:
        """Cut the files of ended processes to what :meth:`output` keeps (``output_cap`` bytes per kind in all).

        Each restart of the student's process opens new files that may reach ``FILE_CAP``: without
        this, a notebook whose cells each print 64 MB and end the process filled the grader's disk
        by 128 MB per restart, for as many restarts as the time cap allows.
        """
        for kind in ("stdout", "stderr"):
            left = self.output_cap + 1  # one byte more: output() then knows there was more
            for path in self._files(kind):
                try:
                    size = path.stat().st_size
                    if size > left:
                        os.truncate(path, left)
                    left -= min(size, left)
                except OSError:
                    pass

    def _describe_exit(self) -> str:
        if self.proc is None:
            return "the process was stopped"
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the process stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the process was killed by {name}" + (" (memory cap?)" if name == "SIGKILL" else "")
        return f"the process exited with status {code}"

    def _wait(self, deadline: float, on_callback=None):
        """The next reply of the student's process, serving callbacks until it comes."""
        while True:
            try:
                raw = receive_bytes(self._from, deadline)
            except StudentTimeout:
                self.stop()
                raise
            except EOFError:
                reason = self._describe_exit()
                self.stop()
                raise StudentDied(reason) from None
            except StudentError:
                self.stop()
                raise
            try:
                reply = loads_untrusted(raw)
            except StudentError:
                self.stop()  # the channel cannot be trusted any more: a fresh process for the next call
                raise
            if not isinstance(reply, tuple) or not reply or not isinstance(reply[0], str):
                self.stop()
                raise StudentError("the student's process sent a message the grader does not understand")
            if reply[0] == "callback" and on_callback is not None and len(reply) == 4:
                _, name, args, kwargs = reply
                try:
                    message = _capped_call(
                        deadline, lambda: on_callback(name, tuple(args), dict(kwargs)), self.memory_cap
                    )
                except StudentTimeout:  # the reference, on what the student sent, ran past the deadline
                    self.stop()
                    raise
                try:
                    send(self._to, message, deadline)
                except StudentTimeout:
                    self.stop()
                    raise
                except OSError:
                    reason = self._describe_exit()
                    self.stop()
                    raise StudentDied(reason) from None
                continue
            return reply

    def request(self, message, deadline: float, on_callback=None):
        """Send ``message``; return the student's answer (raises :class:`StudentError` and friends)."""
        if not self.alive:
            raise StudentDied("the process is not running")
        try:
            send(self._to, message, deadline)
        except StudentTimeout:
            self.stop()
            raise
        except (BrokenPipeError, OSError):
            reason = self._describe_exit()
            self.stop()
            raise StudentDied(reason) from None
        reply = self._wait(deadline, on_callback)
        if reply[0] == "ok":
            return reply[1] if len(reply) > 1 else None
        if reply[0] == "raised":
            raise StudentError(str(reply[1]) if len(reply) > 1 else "error")
        self.stop()
        raise StudentError(f"the student's process answered {reply[0]!r}, which the grader does not understand")

    def run_cell(self, source: str, name: str, deadline: float):
        """Run one cell of the student's notebook (raises what :meth:`request` raises)."""
        return self.request(("cell", source, name), deadline)

    def call(self, name: str, args, kwargs, deadline: float, overrides=(), on_callback=None):
        """Call the student's function ``name``; names in ``overrides`` call back into the grader."""
        return self.request(("call", name, tuple(args), dict(kwargs), list(overrides)), deadline, on_callback)

    def close(self) -> None:
        """Stop the process and remove what the box left on the machine (its control group)."""
        self.stop()
        if self.pids is not None:
            self.pids.remove()
            self.pids = None

    def output(self) -> str:
        """What the student's code printed (stdout then stderr, each cut at ``output_cap`` bytes over all restarts)."""
        parts = []
        for kind in ("stdout", "stderr"):
            data = b""
            for path in self._files(kind):
                with open(path, "rb") as f:
                    data += f.read(self.output_cap + 1 - len(data))
                if len(data) > self.output_cap:
                    break
            if len(data) > self.output_cap:
                data = data[: self.output_cap] + b"\n[output truncated]\n"
            if data.strip():
                parts.append(data.decode("utf-8", "replace"))
        return "".join(parts)


def _capped_call(deadline: float, function, memory_cap: int):
    """``("result", function())`` or ``("error", why)``, computed in a child process with the student's caps.

    A callback runs the teacher's reference on arguments the student's code chose: a few
    megabytes of them made vrlib's KDE take gigabytes and run past the deadline inside one
    LAPACK call (a signal waits for it).  So it runs in a fork of the grader, its address
    space capped at ``memory_cap`` above the grader's own, killed (``SIGKILL``) at
    ``deadline``; its value comes back in the bounded format of :mod:`vrlib.classroom.wire`.
    Raises :class:`StudentTimeout` past the deadline.
    """
    from vrlib.classroom import wire

    if deadline - time.monotonic() <= 0:
        raise StudentTimeout()
    base = _address_space()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and end without running the grader's exit handlers
        code = 0
        try:
            os.close(read_fd)
            if base is not None:
                apply_limits(base + memory_cap, FILE_CAP)
            try:
                message = ("result", plain(function()))
            except BaseException as exc:  # noqa: BLE001 (MemoryError included: the student's call failed)
                message = ("error", f"{type(exc).__name__}: {exc}"[:500])
            try:
                data = wire.encode(message)
            except Exception as exc:  # noqa: BLE001
                data = wire.encode(("error", f"the reference's value cannot be sent ({exc})"[:500]))
            write_all(write_fd, _HEADER.pack(len(data)) + data)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        try:
            reply = loads_untrusted(receive_bytes(read_fd, deadline))
        except EOFError:
            return ("error", "MemoryError: the reference ended on these arguments (memory cap?)")
        except StudentError as exc:
            return ("error", str(exc))
        if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] in ("result", "error")):
            return ("error", "the reference's value cannot be read")
        return reply
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(read_fd)


def _address_space() -> int | None:
    """Bytes of this process's address space (``VmSize``), or None where ``/proc`` does not say."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _json(obj) -> str:
    import json

    return json.dumps(obj)


def apply_limits(memory_cap: int, file_cap: int, cpu_cap: int | None = None, process_cap: int | None = None) -> None:
    """Cap this process's address space, file sizes, CPU time and processes (soft and hard: final)."""
    limits = [(resource.RLIMIT_AS, memory_cap), (resource.RLIMIT_FSIZE, file_cap)]
    if cpu_cap is not None:
        limits.append((resource.RLIMIT_CPU, int(cpu_cap)))
    if process_cap is not None:
        limits.append((resource.RLIMIT_NPROC, int(process_cap)))
    for limit, value in limits:
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
