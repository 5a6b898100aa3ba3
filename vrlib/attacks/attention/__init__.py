"""Target attention (achilles, appendix A): a network that reads the synthetic records nearest the target.

Instead of hand-made features, the attack feeds each synthetic dataset itself to a small
attention network, in four modules:

* :mod:`~vrlib.attacks.attention.features`: :func:`preprocess` turns one synthetic
  dataset into a fixed-size matrix of its ``top_x`` unique records closest to the target
  (one-hot + min-max scaled values, multiplicity, eq. 5 distance), zero-padded with a mask;
* :mod:`~vrlib.attacks.attention.network`: :class:`TargetAttentionNet` embeds records and
  target, attends from the target to the records and scores the pooled values;
* :mod:`~vrlib.attacks.attention.training`: many targets' networks trained side by side
  as one model with stacked weights;
* :mod:`~vrlib.attacks.attention.attack`: :class:`AttentionAttack` follows the
  privacy-game protocol of :mod:`vrlib.attacks`, ``fit(synthetic_datasets, labels,
  target)`` then ``predict_proba(synthetic_datasets)``, where the datasets are a list of
  DataFrames or a :class:`vrlib.games.SyntheticDatasets`; :func:`fit_attacks` fits many
  targets' attacks at once.

The one-hot + min-max encoding is fitted once, in ``fit`` (on the shadow datasets plus
the target, or on a ``reference`` table), and reused for every dataset scored later.

Where we read the paper one way among several (each also noted where it applies):

* Continuous values are min-max scaled (SPEC §2), not left raw as the appendix says.
* Alg. 1 scores records with ``<q_t, v_j>`` and so never uses ``W_k``; the text speaks of
  queries and keys, so we score with keys, ``<q_t, k_j>`` (standard attention).
* The learning rate is 1e-3 (SPEC); the final text's "10e-3" would literally be 1e-2.
"""

from vrlib.attacks.attention.features import Preprocessed, preprocess
from vrlib.attacks.attention.network import TargetAttentionNet
from vrlib.attacks.attention.attack import AttentionAttack, fit_attacks

__all__ = ["AttentionAttack", "Preprocessed", "TargetAttentionNet", "fit_attacks", "preprocess"]
