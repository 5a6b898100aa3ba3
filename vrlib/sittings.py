"""Long experiments run in sittings: a fixed list of parts, each saved as it finishes, resumed from the saved parts.

An experiment too long for one run is cut into :class:`Part`\\ s, each one setting of it (for
DOMIAS Fig. 6, one generator setting of one seed: :mod:`vrlib.experiments.domias_parts`).  A
sitting (:func:`run_sitting`) goes through the parts in their fixed order, skips those already
saved, makes the others a few at a time and saves each as soon as it is made, so that whatever
a sitting finished survives it.  The parts live in a folder of files meant to be committed
(:class:`PartStore`): per part a CSV of its result rows and a JSON record of what made it (its
key, its settings, the code commit, the machine, when, and how long it took).  A fresh clone
continues from that folder, not from a cache that may be gone.

A part counts as done only when its record's key equals the key the current code gives it (a
hash of the part's settings and of the code that makes it) and its CSV is the one the record
was written with (SHA-256 of its bytes).  Anything else (made by other code or settings,
edited, half written) is made again and written over, never read.

A sitting with a budget starts the next parts only when the time they are expected to take
fits in what is left of it.  That expectation comes from the saved parts themselves: the most
any saved part of the same group took (else of any group), times :data:`MARGIN`.  The first
part of a group none of whose parts was saved runs alone, so that it gets measured; the very
first part of an experiment has no time to go by, and may run past the budget.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import itertools
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from vrlib.data import atomic_write_bytes
from vrlib.errors import VrlibError

__all__ = ["MARGIN", "Part", "PartStore", "run_sitting", "describe_left"]

FORMAT = 1
MARGIN = 1.25  # expected time of the next parts × this must fit in what is left of the budget


@dataclass(frozen=True)
class Part:
    """One setting of a long experiment.

    Parameters
    ----------
    name : str
        The file name of its CSV and record (letters, digits, ``_``, ``-``, ``.``), unique in its experiment.
    key : str
        Hash of ``settings`` and of the code that makes the part: a saved part counts only under this key.
    settings : dict
        What the part is (JSON-ready): written into its record.
    group : str
        Parts of one group are expected to cost about the same (for the budget).
    """

    name: str
    key: str
    settings: dict = field(compare=False)
    group: str = ""

    def __post_init__(self):
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name) or self.name.startswith("."):
            raise VrlibError(f"a part's name must be letters, digits, '_', '-' or '.', not {self.name!r}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class PartStore:
    """The saved parts of one experiment under one profile: ``<name>.csv`` + ``<name>.json`` per part.

    Parameters
    ----------
    folder : path-like
        Created when the first part is written.
    """

    def __init__(self, folder):
        self.folder = Path(folder)

    def _paths(self, part: Part) -> tuple[Path, Path]:
        return self.folder / f"{part.name}.csv", self.folder / f"{part.name}.json"

    def record(self, part: Part) -> dict | None:
        """The part's JSON record as saved, or None when missing or unreadable."""
        path = self._paths(part)[1]
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def state(self, part: Part) -> str:
        """``"done"``, ``"missing"``, or why a saved part is not used (then it is made again)."""
        csv, _ = self._paths(part)
        record = self.record(part)
        if record is None:
            return "missing" if not csv.exists() else "its record is missing or unreadable"
        if record.get("key") != part.key:
            return "made by other code or settings"
        try:
            data = csv.read_bytes()
        except OSError:
            return "its rows are missing"
        if _sha256(data) != record.get("rows_sha256"):
            return "its rows were changed after it was saved"
        return "done"

    def read(self, part: Part) -> pd.DataFrame:
        """The part's rows, exactly as they were saved.

        Raises
        ------
        VrlibError
            When the part is not done (:meth:`state` says why).
        """
        state = self.state(part)
        if state != "done":
            raise VrlibError(f"part {part.name!r} in {self.folder} cannot be used: {state}")
        data = self._paths(part)[0].read_bytes()
        return pd.read_csv(io.BytesIO(data), float_precision="round_trip")

    def write(self, part: Part, rows: pd.DataFrame, info: dict) -> None:
        """Save the part's rows and its record (rows first: a record always describes rows on disk)."""
        if rows.empty:
            raise VrlibError(f"part {part.name!r} made no rows; nothing to save")
        self.folder.mkdir(parents=True, exist_ok=True)
        csv, record_path = self._paths(part)
        data = rows.to_csv(index=False, lineterminator="\n").encode()
        atomic_write_bytes(csv, data)
        record = {
            "format": FORMAT,
            "part": part.name,
            "group": part.group,
            "key": part.key,
            "settings": part.settings,
            "rows_sha256": _sha256(data),
            **info,
        }
        atomic_write_bytes(record_path, (json.dumps(record, indent=1, sort_keys=True, default=str) + "\n").encode())


def _expected_seconds(parts: list[Part], store: PartStore) -> dict[str, float]:
    """Per group, the most a saved part took (``cost_s`` of its record); ``"*"``: the most of any."""
    out: dict[str, float] = {}
    for p in parts:
        record = store.record(p)
        if record is None or store.state(p) != "done":
            continue
        cost = record.get("cost_s")
        if isinstance(cost, (int, float)) and math.isfinite(cost):
            out[p.group] = max(out.get(p.group, 0.0), float(cost))
            out["*"] = max(out.get("*", 0.0), float(cost))
    return out


def describe_left(left: list[Part], expected: dict[str, float] | None = None, width: int = 1) -> str:
    """One line: how many parts are left, per group, and the time they are expected to take where known."""
    if not left:
        return "nothing left: every part is saved"
    counts = Counter(p.group for p in left)
    text = f"{len(left)} part(s) left: " + ", ".join(f"{g or 'parts'} × {n}" for g, n in counts.items())
    if expected:
        known = [expected.get(p.group, expected.get("*")) for p in left]
        if all(k is not None for k in known):
            text += f"; about {sum(known) / max(1, width) / 3600:.2g} h on {width} worker(s) by the saved parts' times"
    return text


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_sitting(
    parts: list[Part],
    store: PartStore,
    make: Callable[[list[Part]], dict],
    budget_s: float | None = None,
    width: int = 1,
    max_parts: int | None = None,
    info: Callable[[], dict] | None = None,
    clock: Callable[[], float] = time.monotonic,
    out: Callable[[str], None] = print,
) -> dict:
    """Make the parts not yet saved, in their order, saving each batch as it finishes; stop before the budget ends.

    Parameters
    ----------
    parts : list of Part
        Every part of the experiment, in the order they are made.
    store : PartStore
    make : callable
        ``make(batch)`` makes the parts of ``batch`` (at most ``width`` of them, run side by side)
        and returns ``{part name: DataFrame of its rows}``.
    budget_s : float, optional
        Seconds this sitting may take; None: no limit.
    width : int
        Parts made at once (the workers ``make`` spreads them over).
    max_parts : int, optional
        Stop after making this many parts.
    info : callable, optional
        Extra fields for every record written (the code commit, the machine).
    clock : callable
        Seconds, for the budget (a test may pass its own).
    out : callable
        Where progress lines go.

    Returns
    -------
    dict
        ``total``, ``done`` (saved and current, after the sitting), ``made`` and ``redone`` (names),
        ``left`` (names, in order), ``stopped`` (why the sitting ended) and ``elapsed_s``.
    """
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise VrlibError("two parts share a name; each part needs its own files")
    width = max(1, int(width))
    start = clock()
    states = {p.name: store.state(p) for p in parts}
    todo = [p for p in parts if states[p.name] != "done"]
    redone = [p.name for p in todo if states[p.name] != "missing"]
    for p in todo:
        if states[p.name] != "missing":
            out(f"part {p.name}: saved but not used ({states[p.name]}); it is made again")
    out(f"{len(parts) - len(todo)} of {len(parts)} parts saved in {store.folder}")
    made: list[str] = []
    stopped = "every part is saved"
    while todo:
        if max_parts is not None and len(made) >= max_parts:
            stopped = f"made the {max_parts} part(s) asked for"
            break
        expected = _expected_seconds(parts, store)
        guess = lambda p: expected.get(p.group, expected.get("*"))  # noqa: E731
        if _unmeasured(todo[0], expected):
            batch = todo[:1]  # nothing saved of its group yet: alone, so that it gets measured
        else:  # the next parts in order, up to the first of a group not yet measured
            batch = list(itertools.takewhile(lambda p: not _unmeasured(p, expected), todo[:width]))
        if max_parts is not None:
            batch = batch[: max_parts - len(made)]
        elapsed = clock() - start
        if budget_s is not None:
            left_s = budget_s - elapsed
            if guess(batch[0]) is None:  # nothing saved at all yet
                if left_s <= 0:
                    stopped = "the budget is spent"
                    break
                out(f"part {batch[0].name}: no part saved yet, its time is unknown; it may run past the budget")
            else:
                need = MARGIN * sum(guess(p) for p in batch) / min(width, len(batch))
                if need > left_s:
                    stopped = (
                        f"the next {len(batch)} part(s) would need about {need / 60:.1f} min "
                        f"({MARGIN:g} × the saved parts' times), {max(left_s, 0) / 60:.1f} min of the budget left"
                    )
                    break
        t0 = clock()
        rows = make(batch)
        wall = clock() - t0
        missing = [p.name for p in batch if p.name not in rows]
        if missing:
            raise VrlibError(f"making {[p.name for p in batch]} gave no rows for {missing}")
        extra = info() if info is not None else {}
        for p in batch:
            cost = wall * min(width, len(batch)) / len(batch)  # the share of the batch's time one worker spent
            store.write(
                p,
                rows[p.name],
                {
                    **extra,
                    "written": _utc_now(),
                    "cost_s": round(cost, 3),
                    "batch": {"parts": [b.name for b in batch], "wall_s": round(wall, 3), "width": width},
                },
            )
            made.append(p.name)
        todo = todo[len(batch) :]
        out(f"saved {', '.join(p.name for p in batch)} in {wall:.1f} s ({len(parts) - len(todo)} of {len(parts)})")
    left = [p.name for p in todo]
    expected = _expected_seconds(parts, store)
    out(f"sitting over: {stopped}; {len(made)} part(s) made in {(clock() - start) / 60:.1f} min")
    out(describe_left(todo, expected, width))
    return {
        "total": len(parts),
        "done": len(parts) - len(todo),
        "made": made,
        "redone": [n for n in redone if n in made],
        "left": left,
        "stopped": stopped,
        "elapsed_s": clock() - start,
    }


def _unmeasured(part: Part, expected: dict[str, float]) -> bool:
    """Whether no part of ``part``'s group has a saved time (its cost is then unknown)."""
    return part.group not in expected
