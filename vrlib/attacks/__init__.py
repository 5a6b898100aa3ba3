"""Membership inference attacks: one module per family, every attack named in :mod:`vrlib.attacks.registry`.

One contract (the registry's docstring says it in full): an attack is fitted either on
labelled synthetic datasets for one target (dataset level: ``query``, ``attention``,
``closest.TargetCloseness``) or on a release and a reference sample (record level:
``domias`` and its baselines, ``closest.DistanceRatio``, ``collision``), and
``score(...)`` gives one number per dataset or per record, higher = more likely a member.
``make_attack(name, **params)`` builds any of them; :mod:`vrlib.attacks.base` holds what
they share as estimators (``get_params``, ``set_params``).
"""
