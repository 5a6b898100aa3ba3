"""Membership inference attacks: one module per family.

Privacy-game attacks (``query``, ``attention``) share one protocol:
``fit(synthetic_datasets, labels, target) -> self`` and
``predict_proba(synthetic_datasets) -> ndarray`` (probability that the target was a member).
Point-wise attacks (``domias`` and its baselines) use ``fit(synthetic, reference) -> self``
and ``score(X) -> ndarray`` (higher = more likely a member).
The membership-collision attack (``collision``: TableGAN-MCA) needs only the release:
``fit(releases, schema) -> self`` and ``score(release) -> ndarray`` (probability that each
released record is a training record).
"""
