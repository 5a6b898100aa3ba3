"""Real tables and their schema: where the files are, how they are checked and read.

* :mod:`~vrlib.data.schema`: :class:`Schema` (which columns are categorical and which
  continuous, and their public domains) and :func:`prepare`, which gives a table the
  dtypes every module downstream relies on and rejects NaNs;
* :mod:`~vrlib.data.files`: where data files are looked for (``$VRLIB_DATA_DIR`` when
  set, else ``../shared/data`` beside the checkout; then the project's ``data/`` folder:
  :func:`search_dirs`), their download from the public source where there is one, and
  the SHA-256 (or git blob id) each must have before it is read;
* :mod:`~vrlib.data.datasets`: the loaders, :func:`load` (``adult``, ``census``,
  ``california``) and :func:`read_csv` for a user's CSV.
"""

from vrlib.data.datasets import (
    ADULT_DOMAIN,
    DATASETS,
    load,
    load_adult,
    load_california,
    load_census,
    read_csv,
    train_test_split,
)
from vrlib.data.files import FILES, DataFile, atomic_write_bytes, find_file, search_dirs, verify
from vrlib.data.schema import Schema, prepare, quantile_domain

__all__ = [
    "DATASETS",
    "Schema",
    "prepare",
    "load",
    "load_adult",
    "load_census",
    "load_california",
    "quantile_domain",
    "ADULT_DOMAIN",
    "read_csv",
    "find_file",
    "search_dirs",
    "verify",
    "atomic_write_bytes",
    "FILES",
    "DataFile",
    "train_test_split",
]
