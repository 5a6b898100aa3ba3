"""Synthetic data generators behind one small protocol, looked up by name.

Every generator is a scikit-learn-style estimator: parameters in ``__init__``,
``fit(df, schema, seed) -> self`` and ``sample(n, seed) -> DataFrame`` with the
input's columns, dtypes and category sets.  :func:`get_generator` builds one by name;
the modules are imported lazily so that choosing BayNet never imports PyTorch.
"""

from __future__ import annotations

from importlib import import_module

from vrlib.errors import VrlibError

# name -> "module:class" inside vrlib.generators
REGISTRY = {
    "synthpop": "synthpop:Synthpop",
    "baynet": "bayesnet:BayNet",
    "privbayes": "bayesnet:PrivBayes",
    "tvae": "neural:TVAE",
    "ctgan": "neural:CTGAN",
    "noise": "noise:AdditiveNoise",
    "wgan_gp": "wgan:WGANGP",
    "wgan_wc": "wgan:WGANWC",
    "gan": "gan:GAN",
    "adsgan": "adsgan:ADSGAN",
    "pategan": "pategan:PATEGAN",
    "nflow": "nflow:NFlow",
}


def get_generator(name: str, **params):
    """A new, unfitted generator ``name`` with the given parameters.

    Parameters
    ----------
    name : {"synthpop", "baynet", "privbayes", "tvae", "ctgan", "noise", "wgan_gp", "wgan_wc", "gan", "adsgan", \
            "pategan", "nflow"}
    **params
        Passed to the generator's constructor (e.g. ``epsilon`` for PrivBayes).
    """
    if name not in REGISTRY:
        raise VrlibError(f"unknown generator {name!r}; choose one of {sorted(REGISTRY)}")
    module, cls = REGISTRY[name].split(":")
    return getattr(import_module(f"vrlib.generators.{module}"), cls)(**params)


__all__ = ["REGISTRY", "get_generator"]
