"""Run profiles: the sizes each experiment family uses under ``smoke``, ``quick`` and ``paper``.

Each family registers its own table of sizes with :func:`register`; notebooks ask for
:func:`profile_settings(family, profile)` and may override single values.
"""

from __future__ import annotations

from vrlib.errors import VrlibError

PROFILES = ("smoke", "quick", "paper")

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
    if family not in _FAMILIES:
        raise VrlibError(f"unknown experiment family {family!r}; known: {sorted(_FAMILIES)}")
    settings = dict(_FAMILIES[family][profile])
    unknown = [k for k in overrides if k not in settings]
    if unknown:
        raise VrlibError(f"unknown setting(s) {unknown} for {family!r}; known: {sorted(settings)}")
    settings.update(overrides)
    return settings
