"""The student's process: runs a submission's cells and calls its functions for the grader.

Started by :class:`vrlib.classroom.fence.Fence` as ``python -m vrlib.classroom._student``
(in a bubblewrap box by default); not meant to be run by hand.  Its configuration comes
in ``VRLIB_STUDENT_CONFIG`` (JSON); it then caps itself (memory, CPU, file sizes,
processes, printed output) before any student code runs and answers the grader's
requests until the channel closes, its replies in :mod:`vrlib.classroom.wire`'s format.
Outside a box (code the teacher trusts) it also withholds the references the grader
compares with and installs an audit hook.
"""

from __future__ import annotations

import builtins
import json
import os
import pickle
import signal
import sys

from vrlib.classroom.fence import apply_limits, plain, receive_bytes, send_reply

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.mkdir",
    "os.rename",
    "os.replace",
    "os.chmod",
    "os.chown",
    "os.truncate",
    "os.link",
    "os.symlink",
    "os.utime",
    "os.chflags",
    "os.lchflags",
    "os.setxattr",
    "os.removexattr",
    "shutil.rmtree",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.move",
    "shutil.chown",
    "shutil.make_archive",
    "shutil.unpack_archive",
}
_REFUSED_EVENTS = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "os.startfile",
    "webbrowser.open",
}


class _Capped:
    """A text stream that keeps the first ``cap`` characters written through it (shared budget)."""

    budget = [0]

    def __init__(self, stream, cap: int):
        self._stream, self._cap, self.truncated = stream, cap, False

    def write(self, text) -> int:
        text = str(text)
        left = self._cap - self.budget[0]
        if left > 0:
            part = text[:left]
            self.budget[0] += len(part)
            try:
                self._stream.write(part)
            except OSError:
                pass
        if len(text) > max(left, 0) and not self.truncated:
            self.truncated = True
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            pass

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self):
        return "utf-8"


def _under(path: str, folders) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _fspath(arg):
    if isinstance(arg, (str, bytes)) or hasattr(arg, "__fspath__"):
        try:
            p = os.fsdecode(os.fspath(arg))
        except Exception:
            return None
        return os.path.realpath(p)
    return None


def make_hook(scratch: str, hidden: list[str]):
    """The audit hook of the student's process (see :mod:`vrlib.classroom.fence`)."""
    writable = [scratch]
    me = os.getpid()

    def hook(event, args):
        if event == "open":
            path = _fspath(args[0]) if args else None
            if path is None:
                return
            if _under(path, hidden):
                raise PermissionError(f"the grader does not let a submission open {path}")
            mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
            writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
            if writes and not _under(path, writable) and path != os.devnull:
                raise PermissionError(f"the grader lets a submission write only in its scratch folder, not {path}")
        elif event in ("os.listdir", "os.scandir", "os.chdir", "glob.glob"):
            path = _fspath(args[0]) if args and args[0] is not None else None
            if path is not None and _under(path, hidden):
                raise PermissionError(f"the grader does not let a submission list {path}")
        elif event in _PATH_EVENTS:
            for arg in args:
                path = _fspath(arg)
                if path is not None and not _under(path, writable):
                    raise PermissionError(
                        f"the grader lets a submission change files only in its scratch folder, not {path}"
                    )
        elif event in _REFUSED_EVENTS:
            raise PermissionError(f"the grader does not let a submission start programs ({event})")
        elif event in ("os.kill", "os.killpg"):
            target = args[0] if args else None
            if target not in (0, me, os.getpgid(0)):
                raise PermissionError("the grader does not let a submission signal other processes")

    return hook


def _stub(module_name: str, name: str):
    def withheld(*args, **kwargs):
        raise RuntimeError(f"{module_name}.{name} is withheld while your answer is graded: write the answer yourself")

    withheld.__name__ = name
    return withheld


def _replace(module, name: str) -> None:
    """Replace ``module.name`` and every re-export of it in the loaded modules of its package by a stub."""
    original = getattr(module, name, None)
    if original is None:
        return
    stub = _stub(module.__name__, name)
    package = module.__name__.split(".")[0]
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").split(".")[0] != package:
            continue
        for attr, value in list(vars(mod).items()):
            if value is original:
                setattr(mod, attr, stub)


class _Withholder:
    """Withholds references (``"module:name"``): now if the module is loaded, else as soon as it is.

    Waiting for the import keeps the process quick to start when a submission never imports
    the module (its heavy dependencies are then never loaded).
    """

    def __init__(self, specs):
        self.pending: dict[str, list[str]] = {}
        for spec in specs:
            module_name, _, name = spec.partition(":")
            if module_name in sys.modules:
                _replace(sys.modules[module_name], name)
            else:
                self.pending.setdefault(module_name, []).append(name)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.pending:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, names = spec.loader, self.pending[fullname]
        original = loader.exec_module

        def exec_module(module):
            original(module)
            for name in names:
                _replace(module, name)

        loader.exec_module = exec_module
        return spec


def _one_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = text.strip().splitlines()[0] if text.strip() else ""
    name = type(exc).__name__
    return (f"{name}: {text}" if text else name)[:500]


def main() -> None:
    config = json.loads(os.environ.pop("VRLIB_STUDENT_CONFIG"))
    rfd, wfd = config["read_fd"], config["write_fd"]
    os.set_inheritable(rfd, False)
    os.set_inheritable(wfd, False)
    boxed = config.get("sandboxed", False)
    apply_limits(
        config["memory_cap"],
        config["file_cap"],
        config.get("cpu_cap"),
        config.get("process_cap") if boxed else None,  # outside a box the count would include the grader's user
    )
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full output file fails the write, it does not kill
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.stdout = _Capped(sys.stdout, config["output_cap"])
    sys.stderr = _Capped(sys.stderr, config["output_cap"])
    import numpy  # noqa: F401  (the grader's plain data)

    if not boxed:  # in a box the references are stubs in its copy of vrlib, and the OS fences the rest
        if config["withheld"]:
            sys.meta_path.insert(0, _Withholder(config["withheld"]))
        sys.addaudithook(make_hook(config["scratch"], config["hidden"]))
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    send_reply(wfd, ("ready",))

    def reply(message):
        try:
            send_reply(wfd, message)
        except Exception as exc:  # an answer the format cannot carry
            send_reply(wfd, ("raised", f"the answer cannot be sent to the grader ({_one_line(exc)})"))

    while True:
        try:
            request = pickle.loads(receive_bytes(rfd))
        except EOFError:
            return
        kind = request[0]
        if kind == "cell":
            _, source, name = request
            try:
                exec(compile(source, name, "exec"), namespace)
                reply(("ok", None))
            except BaseException as exc:  # noqa: BLE001 (SystemExit and KeyboardInterrupt included)
                reply(("raised", _one_line(exc)))
        elif kind == "call":
            _, name, args, kwargs, overrides = request
            saved = {n: namespace.get(n) for n in overrides}
            try:
                for n in overrides:
                    namespace[n] = _callback(n, rfd, wfd)
                function = namespace.get(name)
                if not callable(function):
                    raise NameError(f"name {name!r} is not defined (run the cell that defines it)")
                result = plain(function(*args, **kwargs))
                reply(("ok", result))
            except BaseException as exc:  # noqa: BLE001
                reply(("raised", _one_line(exc)))
            finally:
                for n, value in saved.items():
                    namespace[n] = value


def _callback(name: str, rfd: int, wfd: int):
    """A stand-in for ``name`` that asks the grader (which holds the reference) to compute it."""

    def call_grader(*args, **kwargs):
        send_reply(wfd, ("callback", name, plain(args), plain(kwargs)))
        answer = pickle.loads(receive_bytes(rfd))
        if answer[0] == "result":
            return answer[1]
        raise RuntimeError(f"the reference {name} raised {answer[1]}")

    call_grader.__name__ = name
    return call_grader


if __name__ == "__main__":
    main()
