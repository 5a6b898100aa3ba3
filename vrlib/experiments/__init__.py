"""Experiment families, one module each, returning tidy DataFrames; and the run profiles.

A profile (``smoke``, ``quick``, ``paper``) fixes the sizes of an experiment: ``smoke``
checks that everything runs (CI, about a minute per notebook), ``quick`` (the default)
makes every figure on 2 cores at reduced sizes from one root seed (its notebooks say what
that can and cannot show), ``paper`` uses the papers' sizes.
"""

from vrlib.experiments.profiles import PROFILES, profile_settings

__all__ = ["PROFILES", "profile_settings"]
