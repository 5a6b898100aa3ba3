"""How long each notebook took under each profile, as measured (``docs/run_times.csv``).

The table is the machine-readable form of the times in ``docs/runs.md``: one row per
notebook and profile that has a measured time, with the commit it was measured at and how
(cores, cache, sittings).  Each notebook's first code cell shows its rows with
:func:`times`, so the time a notebook states is read from one place, not typed into it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vrlib.errors import VrlibError

__all__ = ["TIMES_FILE", "PROFILES", "read_times", "times"]

TIMES_FILE = Path(__file__).resolve().parents[1] / "docs" / "run_times.csv"
PROFILES = ("smoke", "quick", "paper")
_COLUMNS = ["notebook", "profile", "time", "commit", "how"]


def read_times(path=None) -> pd.DataFrame:
    """Every measured time: columns ``notebook`` (``01``…, ``*`` for all together), ``profile``, ``time``,
    ``commit`` and ``how``.

    Raises
    ------
    VrlibError
        When the file is missing or its columns or profiles are not the expected ones.
    """
    path = Path(path) if path is not None else TIMES_FILE
    if not path.is_file():
        raise VrlibError(f"no table of measured run times at {path}; it comes with the project (docs/run_times.csv)")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(df.columns) != _COLUMNS:
        raise VrlibError(f"{path} has columns {list(df.columns)}; expected {_COLUMNS}")
    bad = sorted(set(df["profile"]) - set(PROFILES))
    if bad:
        raise VrlibError(f"{path} names unknown profile(s) {bad}; the profiles are {list(PROFILES)}")
    return df


def times(notebook: str, path=None) -> pd.DataFrame:
    """The measured times of one notebook, one row per profile (smoke, quick, paper).

    Parameters
    ----------
    notebook : str
        Its number (``"05"``) or name (``"05_domias"``).
    path : path-like, optional
        Another table than ``docs/run_times.csv``.

    Returns
    -------
    DataFrame
        Indexed by profile, with ``time``, ``measured at`` (the commit) and ``how``; a
        profile with no measurement says so.  A time measured for every notebook together
        (the smoke run) is given as such.
    """
    number = str(notebook).split("_", 1)[0]
    if not (len(number) == 2 and number.isdigit()):
        raise VrlibError(f"notebook {notebook!r}: give its two-digit number, e.g. '05', or its name")
    df = read_times(path)
    rows = []
    for profile in PROFILES:
        own = df[(df["notebook"] == number) & (df["profile"] == profile)]
        together = df[(df["notebook"] == "*") & (df["profile"] == profile)]
        if len(own):
            r = own.iloc[0]
            rows.append((profile, r["time"], r["commit"], r["how"]))
        elif len(together):
            r = together.iloc[0]
            rows.append((profile, f"{r['time']} for every notebook together", r["commit"], r["how"]))
        else:
            rows.append((profile, "not measured", "", ""))
    return pd.DataFrame(rows, columns=["profile", "time", "measured at", "how"]).set_index("profile")
