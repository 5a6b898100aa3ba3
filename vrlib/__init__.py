"""vrlib: reproducible experiments on the privacy of synthetic tabular data.

The flow of data is ``data`` -> ``encoding`` -> ``distance`` -> ``selection`` for
choosing target records, then ``generators`` -> ``games`` -> ``attacks`` ->
``metrics`` -> ``report`` for the privacy games.  Each module holds one idea.
"""

__version__ = "0.1.0"

from vrlib.data import Schema, load  # noqa: E402

__all__ = ["Schema", "load", "__version__"]
