"""Run profiles: the sizes each experiment family uses under ``smoke``, ``quick`` and ``paper``.

Each family registers its own table of sizes with :func:`register`; notebooks ask for
:func:`profile_settings(family, profile)` and may override single values.
"""

from __future__ import annotations

from importlib import import_module

from vrlib.errors import VrlibError

PROFILES = ("smoke", "quick", "paper")
# Each family registers its sizes in its module, vrlib.experiments.<family>, imported on first use
FAMILIES = ("achilles", "domias", "lost", "mca")

_FAMILIES: dict[str, dict[str, dict]] = {}


def register(family: str, sizes: dict[str, dict]) -> None:
    """Register the sizes of an experiment family: ``{profile: {setting: value}}`` for every profile."""
    missing = [p for p in PROFILES if p not in sizes]
    if missing:
        raise VrlibError(f"family {family!r} lacks profile(s) {missing}")
    _FAMILIES[family] = sizes


def profile_settings(family: str, profile: str, **overrides) -> dict:
    """The settings of ``family`` under ``profile``, with ``overrides`` applied.

    Raises
    ------
    VrlibError
        For an unknown family, profile, or override name.
    """
    if profile not in PROFILES:
        raise VrlibError(f"unknown profile {profile!r}; choose one of {PROFILES}")
    if family not in _FAMILIES and family in FAMILIES:
        import_module(f"vrlib.experiments.{family}")  # registers it
    if family not in _FAMILIES:
        raise VrlibError(f"unknown experiment family {family!r}; choose one of {sorted({*FAMILIES, *_FAMILIES})}")
    settings = dict(_FAMILIES[family][profile])
    unknown = [k for k in overrides if k not in settings]
    if unknown:
        raise VrlibError(f"unknown setting(s) {unknown} for {family!r}; known: {sorted(settings)}")
    settings.update(overrides)
    return settings
