"""Checks of parameters: type, range and known names, each rule stated once for the library and the notebooks.

The library checks its arguments with :func:`check_integer`, :func:`check_number` and
:func:`check_probability` (``k must be an integer >= 1, got 0``); a notebook checks its
parameters with the same rules through :func:`check_parameters`, below.

Every notebook calls :func:`check_parameters` in the first code cell after its
``parameters`` cell, so that a bad value (``-p seed abc``, ``-p profile quik``) or an
unknown name (a typo ``-p sed 3`` that papermill would otherwise inject beside the real
``seed``) stops the run at once with a message naming the parameter.

Usage (the cell right after the ``parameters`` cell)::

    from vrlib.params import check_parameters, choice, integer, one_or_more

    check_parameters(
        globals(),
        "profile", "seed", "figures_dir", "tables_dir", "n_jobs",  # the standard checks, by name
        datasets=one_or_more(["adult", "census"]),                 # this notebook's own checks
        n_targets=integer(minimum=1, optional=True),
    )

Every parameter of the notebook is named once, either positionally (a standard
check from :data:`STANDARD`) or as a keyword with its own check (the tests check that
the names are exactly those of the ``parameters`` cell, so a new parameter cannot slip
through unchecked).  Unknown names are found in the cell papermill injects
(``# Parameters``, read from IPython's input history), so cells run out of order in
Jupyter raise no false alarm; without IPython, every public non-callable name of
``namespace`` must be a named parameter.
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
import os
from collections.abc import Callable, Sequence

from vrlib.errors import VrlibError

Check = Callable[[str, object], None]  # raises VrlibError naming the parameter, or returns None


# --------------------------------------------------------------------------- the rules


def is_integer(value, minimum=None, maximum=None) -> bool:
    """Whether ``value`` is an integer (a bool is not) in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return False
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def is_number(value, minimum=None, maximum=None, *, above=None, below=None, allow_inf: bool = False) -> bool:
    """Whether ``value`` is a real number within the bounds (a bool is not; never NaN; ``±inf`` only with ``allow_inf``).

    ``minimum`` / ``maximum`` are inclusive bounds, ``above`` / ``below`` exclusive ones.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value:
        return False
    if not allow_inf and abs(value) == math.inf:
        return False
    return (
        (minimum is None or value >= minimum)
        and (maximum is None or value <= maximum)
        and (above is None or value > above)
        and (below is None or value < below)
    )


def _bounds(minimum=None, maximum=None, above=None, below=None) -> str:
    """The bounds in words: ``>= 1``, or an interval such as ``in (0, 1]`` when there is a bound on each side."""
    low = ("(", above) if above is not None else ("[", minimum) if minimum is not None else None
    high = (")", below) if below is not None else ("]", maximum) if maximum is not None else None
    if low and high:
        return f"in {low[0]}{low[1]}, {high[1]}{high[0]}"
    parts = [f"{op} {v}" for op, v in ((">", above), (">=", minimum), ("<", below), ("<=", maximum)) if v is not None]
    return " and ".join(parts)


def _integer_words(minimum=None, maximum=None, optional: bool = False) -> str:
    return " ".join(filter(None, ("an integer", _bounds(minimum, maximum)))) + (" or None" if optional else "")


def _number_words(minimum=None, maximum=None, above=None, below=None, optional: bool = False) -> str:
    words = " ".join(filter(None, ("a number", _bounds(minimum, maximum, above, below))))
    return words + (" or None" if optional else "")


def _finite(value, allow_inf: bool) -> str:
    """What to add to the words of a number rule when ``value`` fails it by being infinite."""
    return " (finite)" if not allow_inf and is_number(value, allow_inf=True) and abs(value) == math.inf else ""


# --------------------------------------------------------------------------- the library's checks


def check_integer(
    name: str, value, minimum=None, maximum=None, *, optional: bool = False, want: str | None = None
) -> int | None:
    """``value`` as an int if it is an integer in ``[minimum, maximum]`` (or None when ``optional``).

    Raises
    ------
    VrlibError
        ``{name} must be {want}, got {value!r}``; ``want`` defaults to the rule in words
        (``an integer >= 1``), a caller may say it in its own (``a non-negative int (number of rows)``).
    """
    if value is None and optional:
        return None
    if not is_integer(value, minimum, maximum):
        raise VrlibError(f"{name} must be {want or _integer_words(minimum, maximum, optional)}, got {value!r}")
    return int(value)


def check_number(
    name: str,
    value,
    minimum=None,
    maximum=None,
    *,
    above=None,
    below=None,
    allow_inf: bool = False,
    optional: bool = False,
    want: str | None = None,
) -> float | None:
    """``value`` as a float if it is a real number within the bounds (see :func:`is_number`; None when ``optional``).

    Raises
    ------
    VrlibError
        ``{name} must be {want}, got {value!r}`` (``want`` as in :func:`check_integer`).
    """
    if value is None and optional:
        return None
    if not is_number(value, minimum, maximum, above=above, below=below, allow_inf=allow_inf):
        words = want or _number_words(minimum, maximum, above, below, optional) + _finite(value, allow_inf)
        raise VrlibError(f"{name} must be {words}, got {value!r}")
    return float(value)


def check_probability(name: str, value) -> float:
    """``value`` as a float if it is a probability, a number in [0, 1]; else a VrlibError naming ``name``."""
    return check_number(name, value, minimum=0, maximum=1, want="a probability in [0, 1]")


# --------------------------------------------------------------------------- the notebooks' checks


def _fail(name: str, value, want: str) -> None:
    raise VrlibError(f"notebook parameter {name!r} must be {want}, got {value!r}")


def choice(options: Sequence) -> Check:
    """One of ``options``."""
    options = tuple(options)

    def check(name, value):
        if isinstance(value, (list, dict, set)) or value not in options:
            _fail(name, value, f"one of {list(options)}")

    return check


def one_or_more(options: Sequence) -> Check:
    """A non-empty list of distinct members of ``options``."""
    options = tuple(options)

    def check(name, value):
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
            _fail(name, value, f"a non-empty list drawn from {list(options)}")
        unknown = [v for v in value if v not in options]
        if unknown:
            _fail(name, value, f"a list drawn from {list(options)} ({unknown} unknown)")
        if len(set(value)) != len(value):
            _fail(name, value, "a list without repeats")

    return check


def integer(minimum: int | None = None, maximum: int | None = None, optional: bool = False) -> Check:
    """An int in [minimum, maximum] (``None`` too when ``optional``): :func:`is_integer`."""
    want = _integer_words(minimum, maximum, optional)

    def check(name, value):
        if not (value is None and optional) and not is_integer(value, minimum, maximum):
            _fail(name, value, want)

    return check


def number(
    minimum: float | None = None, maximum: float | None = None, optional: bool = False, allow_inf: bool = False
) -> Check:
    """A real number in [minimum, maximum], never NaN (``inf`` only with ``allow_inf``): :func:`is_number`."""
    want = _number_words(minimum, maximum, optional=optional)

    def check(name, value):
        if not (value is None and optional) and not is_number(value, minimum, maximum, allow_inf=allow_inf):
            _fail(name, value, want + _finite(value, allow_inf))

    return check


def optional(check: Check) -> Check:
    """None (e.g. "the profile's"), or a value that ``check`` accepts."""

    def check_or_none(name, value):
        if value is not None:
            check(name, value)

    return check_or_none


def boolean() -> Check:
    """True or False."""

    def check(name, value):
        if not isinstance(value, bool):
            _fail(name, value, "True or False")

    return check


def folder() -> Check:
    """A non-empty path (str or path-like)."""

    def check(name, value):
        if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
            _fail(name, value, "a folder path")

    return check


def text() -> Check:
    """A non-empty string."""

    def check(name, value):
        if not isinstance(value, str) or not value.strip():
            _fail(name, value, "a non-empty string")

    return check


def items(*checks: Check) -> Check:
    """A list (or tuple) of exactly ``len(checks)`` elements, the i-th passing ``checks[i]``."""

    def check(name, value):
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or len(value) != len(checks):
            _fail(name, value, f"a list of {len(checks)} items")
        for i, (c, v) in enumerate(zip(checks, value)):
            c(f"{name}[{i}]", v)

    return check


def list_of(item: Check, minimum_length: int = 0) -> Check:
    """A list whose every element passes ``item`` (reported as ``name[i]``)."""

    def check(name, value):
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or len(value) < minimum_length:
            _fail(name, value, f"a list of at least {minimum_length} item(s)")
        for i, v in enumerate(value):
            item(f"{name}[{i}]", v)

    return check


def _standard() -> dict[str, Check]:
    from vrlib.data import DATASETS
    from vrlib.experiments.profiles import PROFILES
    from vrlib.generators import REGISTRY

    def n_jobs(name, value):
        if value is None or value == -1:
            return
        integer(minimum=1)(name, value)

    return {
        "profile": choice(PROFILES),
        "seed": integer(minimum=0),
        "figures_dir": folder(),
        "tables_dir": folder(),
        "n_jobs": n_jobs,
        "cache": boolean(),
        "dataset": choice(DATASETS),
        "datasets": one_or_more(DATASETS),
        "generator": choice(sorted(REGISTRY)),
        "generators": one_or_more(sorted(REGISTRY)),
    }


STANDARD = (
    "profile",
    "seed",
    "figures_dir",
    "tables_dir",
    "n_jobs",
    "cache",
    "dataset",
    "datasets",
    "generator",
    "generators",
)
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def injected_names(namespace: dict) -> set[str] | None:
    """Names papermill injected (its ``# Parameters`` cell in IPython's history), or None without IPython."""
    history = namespace.get("In")
    if not isinstance(history, list):
        return None
    names = set()
    for source in history:
        if isinstance(source, str) and source.lstrip().startswith("# Parameters"):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            names |= {
                t.id
                for node in tree.body
                if isinstance(node, ast.Assign)
                for t in node.targets
                if isinstance(t, ast.Name)
            }
    return names


def _parameter_like(namespace: dict) -> set[str]:
    import types

    return {
        k
        for k, v in namespace.items()
        if not k.startswith("_")
        and k not in _IPYTHON_NAMES
        and not isinstance(v, (types.ModuleType, type))
        and not callable(v)
    }


def check_parameters(namespace: dict, *standard: str, **checks: Check) -> None:
    """Validate a notebook's parameters in ``namespace`` (pass ``globals()``).

    Parameters
    ----------
    namespace : dict
        The notebook's globals, right after its parameters cell (and papermill's
        injected cell).
    *standard : str
        Parameters checked the standard way (see :data:`STANDARD`): ``profile``
        (a known profile), ``seed`` (int >= 0), ``figures_dir`` / ``tables_dir``
        (paths), ``n_jobs`` (None, -1 or int >= 1), ``cache`` (bool), ``dataset`` /
        ``datasets`` (a known dataset / a non-empty list of them), ``generator`` /
        ``generators`` (from :data:`vrlib.generators.REGISTRY`).
    **checks : callable
        The notebook's other parameters, each with its check: :func:`choice`,
        :func:`one_or_more`, :func:`integer`, :func:`number`, :func:`optional`, :func:`boolean`,
        :func:`folder`, :func:`text`, :func:`items`, :func:`list_of`, or any ``check(name, value)`` raising
        :class:`~vrlib.errors.VrlibError`.  A keyword also overrides a standard
        check of the same name (e.g. ``datasets=one_or_more(["adult", "census"])``).

    Raises
    ------
    VrlibError
        Naming the first unknown parameter (with the closest known name), or the
        first parameter whose value fails its check.
    """
    table = _standard()
    bad = [s for s in standard if s not in table]
    if bad:
        raise VrlibError(f"no standard check for {bad}; standard ones: {sorted(table)} (give others as keywords)")
    known = {s: table[s] for s in standard}
    known.update(checks)
    injected = injected_names(namespace)
    candidates = injected if injected is not None else _parameter_like(namespace)
    unknown = sorted(candidates - set(known))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise VrlibError(
            f"unknown notebook parameter(s) {', '.join(hints)}; this notebook's parameters are {sorted(known)}"
        )
    absent = sorted(n for n in known if n not in namespace)
    if absent:
        raise VrlibError(f"parameter(s) {absent} are checked but not defined: run the parameters cell first")
    for name, check in known.items():
        check(name, namespace[name])


__all__ = [
    "is_integer",
    "is_number",
    "check_integer",
    "check_number",
    "check_probability",
    "check_parameters",
    "choice",
    "one_or_more",
    "integer",
    "number",
    "optional",
    "boolean",
    "folder",
    "text",
    "items",
    "list_of",
    "injected_names",
    "STANDARD",
]
