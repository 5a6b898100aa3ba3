"""The versions of the packages that can change a result, read once per process.

A newer scikit-learn, SciPy or rdt can move a fitted mixture model, hence a TVAE, hence
every AUC after it; so these versions go with every output (:func:`vrlib.report.machine`)
and with every cache entry (:mod:`vrlib.cache`), where an entry made under other versions
is made again rather than mixed into a run.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata

PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "numba", "torch", "ctgan", "rdt")


@lru_cache(maxsize=1)
def _read() -> tuple[tuple[str, str | None], ...]:
    out = []
    for name in PACKAGES:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, None))
    return tuple(out)


def package_versions() -> dict[str, str | None]:
    """``{package: version}`` for :data:`PACKAGES` (None for one not installed)."""
    return dict(_read())
