"""Experiment families, one module each, returning tidy DataFrames; and the run profiles.

A profile (``smoke``, ``quick``, ``paper``) fixes the sizes of an experiment: ``smoke``
checks that everything runs (CI, about a minute per notebook), ``quick`` (the default)
is large enough for a stable ordering in a few minutes on 2 cores, ``paper`` uses the
papers' sizes.
"""

from vrlib.experiments.profiles import PROFILES, profile_settings

__all__ = ["PROFILES", "profile_settings"]
