"""DOMIAS Fig. 6 from the runs (seeds) whose parts are all saved: an interim figure while the sittings go on.

Fig. 6 is made in parts, one per seed and generator setting (:mod:`vrlib.experiments.domias_parts`);
:func:`~vrlib.experiments.domias_parts.assemble` gives its rows only once every part of every seed is
saved and current. :func:`complete_runs` gives the rows of the seeds that are whole already, and says
how many of the profile's runs they are: a seed with a part missing, or saved by other code or
settings, is left out entirely, so that no mean mixes a run that has a generator with one that lacks
it. :func:`title` and :func:`run_count` read that count back from the figure's table
(``n_seeds``, and ``n_seeds_planned``, the profile's number of runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from vrlib import sittings
from vrlib.errors import VrlibError

__all__ = ["Runs", "select", "complete_runs", "run_count", "runs_phrase", "title"]

TITLE = "Fig. 6: privacy vs quality"


def _span(seeds) -> str:
    """``0–3`` for consecutive seeds, else ``0, 2, 5``."""
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(map(str, seeds))


@dataclass(frozen=True)
class Runs:
    """The seeds of a profile whose parts are all saved and current, and their rows.

    Attributes
    ----------
    rows : DataFrame or None
        The parts' rows of the complete seeds, in the order the parts are made (None: no seed complete).
    seeds : tuple of int
        The complete seeds, in the profile's order.
    planned : tuple of int
        Every seed of the profile.
    saved : dict
        Per seed of the profile: ``(parts saved and current, parts in all)``.
    """

    rows: pd.DataFrame | None
    seeds: tuple
    planned: tuple
    saved: dict = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every run of the profile is whole."""
        return len(self.seeds) == len(self.planned)

    @property
    def pending(self) -> tuple:
        return tuple(s for s in self.planned if s not in self.seeds)

    def describe(self) -> str:
        """``4 of 8 runs (seeds 0–3); pending: seeds 4–7 (seed 4: 2 of 29 parts saved; 5–7: none)``."""
        held = f"{len(self.seeds)} of {len(self.planned)} run{'s' if len(self.planned) > 1 else ''}"
        if self.seeds:
            held += f" (seed{'s' if len(self.seeds) > 1 else ''} {_span(self.seeds)})"
        if self.complete:
            return held + ", every part saved and current"
        started = [s for s in self.pending if self.saved.get(s, (0, 0))[0]]
        empty = [s for s in self.pending if s not in started]
        what = [f"seed {s}: {self.saved[s][0]} of {self.saved[s][1]} parts saved" for s in started]
        if empty:
            what.append(f"{'seed ' if len(empty) == 1 else 'seeds '}{_span(empty)}: none")
        pending = f"seed{'s' if len(self.pending) > 1 else ''} {_span(self.pending)}"
        return f"{held}; pending: {pending} ({'; '.join(what)})"


def select(parts: list[sittings.Part], store: sittings.PartStore) -> Runs:
    """The seeds (``part.settings["seed"]``) all of whose ``parts`` are done in ``store``, and their rows.

    Parameters
    ----------
    parts : list of vrlib.sittings.Part
        Every part of the experiment, in the order they are made; each has a ``"seed"`` setting.
    store : vrlib.sittings.PartStore

    Returns
    -------
    Runs
    """
    if not parts:
        raise VrlibError("no parts given: pass every part of the experiment (domias_parts.fig6_parts)")
    if any("seed" not in p.settings for p in parts):
        raise VrlibError("every part needs a 'seed' setting to be counted as part of a run")
    planned = tuple(dict.fromkeys(int(p.settings["seed"]) for p in parts))
    done = {p.name: store.state(p) == "done" for p in parts}
    saved = {}
    for s in planned:
        of_seed = [p for p in parts if int(p.settings["seed"]) == s]
        saved[s] = (sum(done[p.name] for p in of_seed), len(of_seed))
    seeds = tuple(s for s in planned if saved[s][0] == saved[s][1])
    if not seeds:
        return Runs(None, (), planned, saved)
    read = []
    for p in parts:
        if int(p.settings["seed"]) not in seeds:
            continue
        rows = store.read(p)
        if "seed" in rows.columns and set(rows.seed.astype(int)) != {int(p.settings["seed"])}:
            raise VrlibError(
                f"part {p.name!r} of seed {p.settings['seed']} holds rows of seeds {_span(set(rows.seed.astype(int)))}: "
                "its rows do not match its settings; make it again (scripts/run_sitting.py)"
            )
        read.append(rows)
    return Runs(pd.concat(read, ignore_index=True), seeds, planned, saved)


def complete_runs(profile: str, figures_dir=None, **overrides) -> Runs:
    """Fig. 6's rows under ``profile`` from the seeds whose parts are all saved and current (see :func:`select`).

    With every seed complete the rows are :func:`vrlib.experiments.domias_parts.assemble`'s.
    """
    from vrlib.experiments import domias_parts

    parts = domias_parts.fig6_parts(profile, **overrides)
    return select(parts, sittings.PartStore(domias_parts.parts_folder(profile, figures_dir)))


def run_count(table: pd.DataFrame) -> tuple[int, int, int | None]:
    """``(fewest runs, most runs, runs planned)`` of a Fig. 6 table: its ``n_seeds`` and ``n_seeds_planned``
    (None when the table has no ``n_seeds_planned``, as tables made before it was written)."""
    if "n_seeds" not in table.columns or table.n_seeds.isna().all():
        raise VrlibError("the table has no n_seeds column: it is not a summarised Fig. 6 table (domias.summarise)")
    n = table.n_seeds.dropna().astype(int)
    planned = None
    if "n_seeds_planned" in table.columns and table.n_seeds_planned.notna().any():
        planned = int(table.n_seeds_planned.max())
    return int(n.min()), int(n.max()), planned


def runs_phrase(low: int, high: int, planned: int | None, whose: str = "") -> str:
    """``4 of 8 runs`` (``3–4 of 8 runs`` when rows differ; ``4 runs`` when the plan is not known).

    ``whose`` goes before the planned number: ``"the paper's "`` gives ``4 of the paper's 8 runs``.
    """
    n = str(low) if low == high else f"{low}–{high}"
    if planned is None:
        return f"{n} run{'s' if high != 1 else ''}"
    return f"{n} of {whose}{planned} runs"


def title(table: pd.DataFrame, base: str = TITLE) -> str:
    """The figure's title: ``base``, and the runs it holds when fewer than planned (``4 of 8 runs, 4 pending``)."""
    low, high, planned = run_count(table)
    if planned is None or low >= planned:
        return base
    return f"{base}\n{runs_phrase(low, high, planned)}, {planned - low} pending (interim)"
