"""vrlib: reproducible experiments on the privacy of synthetic tabular data.

The flow of data is ``data`` -> ``encoding`` -> ``distance`` -> ``selection`` for
choosing target records, then ``generators`` -> ``games`` -> ``attacks`` ->
``metrics`` -> ``report`` for the privacy games.  Each module holds one idea.
"""

__version__ = "0.1.0"

from vrlib.data import Schema, load  # noqa: E402

__all__ = ["Schema", "load", "audit", "__version__"]


def __getattr__(name):
    if name == "audit":  # imported on first use: it pulls in torch and matplotlib
        import importlib

        return importlib.import_module("vrlib.audit")
    raise AttributeError(f"module 'vrlib' has no attribute {name!r}")
