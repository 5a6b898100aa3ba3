"""TableGAN-MCA experiments (Hu et al. 2021): collisions and their recovery, per generator, as tidy tables.

One *release* = a generator fitted on the pre-processed Adult training split (70 %)
that publishes as many synthetic records as there are training records.  For each
release we record, per released record, its frequency in the release (eq. 4), whether
it is a training record (a colliding member), and the TableGAN-MCA attack score (a
shadow generator of the same family fitted on the release, as in the authors'
notebook).  Synthetic tables and attack scores are cached by content.

The released data take the training data's format: continuous values are rounded to
the decimals of the training data (Adult's ages are whole years; a GAN outputs real
numbers, which would never collide).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vrlib.attacks.collision import TableGanMCA, match_precision, occurs_in, record_frequency
from vrlib.cache import Cache, decode_table, fingerprint_table, make_key, save_table, source_hash
from vrlib.data import Schema, load, preprocess_adult_mca, train_test_split
from vrlib.errors import VrlibError
from vrlib.experiments.profiles import profile_settings, register
from vrlib.generators import REGISTRY, get_generator
from vrlib.metrics import auc, recovery_metrics
from vrlib.parallel import derive_seed, run

VERSION = 1

# Values the paper and the authors' notebook give (Adult, WGAN-GP, attack model (1)).
PAPER = {
    "n_train": 31655,
    "n_test": 13567,
    "unique_share": 0.7939,  # Table 3, Pr[#x = 1]
    "at_most_3_share": 0.8607,  # Table 3, Pr[#x <= 3]
    "members_among_freq_gt3": 0.96,  # Fig. 3 text
    "nonmembers_among_unique": 0.91,  # Fig. 3 text
    "wgan_gp_collision_rate": 0.17,  # authors' notebook: share of released records that are training records
    "wgan_gp_flagged": 2486,
    "wgan_gp_true": 2008,
    "wgan_gp_precision": 0.81,
}

# quick: the full training split, fewer epochs (WGAN-GP about 6 s per epoch on one shared CPU core).
register("mca", {
    "smoke": {"n_train": 1500, "wgan_epochs": 2, "tvae_epochs": 2, "ctgan_epochs": 1, "batch_size": 500,
              "epsilons": [1.0], "raw_generators": ["baynet"], "model2_generator": "baynet", "model2_n_releases": 2},
    "quick": {"n_train": None, "wgan_epochs": 10, "tvae_epochs": 20, "ctgan_epochs": 5, "batch_size": 500,
              "epsilons": [1.0, 10.0, 100.0], "raw_generators": ["synthpop", "baynet", "tvae"],
              "model2_generator": "baynet", "model2_n_releases": 2},
    "paper": {"n_train": None, "wgan_epochs": 300, "tvae_epochs": 300, "ctgan_epochs": 300, "batch_size": 500,
              "epsilons": [0.1, 1.0, 10.0, 100.0, 1000.0],
              "raw_generators": ["synthpop", "baynet", "wgan_gp", "tvae", "ctgan"], "model2_generator": "wgan_gp",
              "model2_n_releases": 2},
})  # fmt: skip


def data(seed: int = 0, n_train: int | None = None, preprocess: bool = True):
    """``(train, test, schema)``: Adult (pre-processed as the paper unless ``preprocess=False``), split 70/30.

    The split does not depend on ``preprocess`` (the same rows either way).  ``n_train``
    keeps a seeded subsample of the training split (the smoke profile).
    """
    df, schema = load("adult")
    if preprocess:
        df, schema = preprocess_adult_mca(df, schema)
    train, test = train_test_split(df, 0.3, seed=derive_seed(seed, "mca-split"))
    if n_train is not None and n_train < len(train):
        keep = np.sort(np.random.default_rng(derive_seed(seed, "mca-subsample")).choice(len(train), n_train, replace=False))
        train = train.iloc[keep]
    return train, test, schema


def training_statistics(train: pd.DataFrame, test: pd.DataFrame, schema: Schema) -> dict:
    """Table 3: sizes and the share of training records that are unique / occur at most 3 times."""
    freq = record_frequency(train, schema)
    return {
        "n_train": len(train), "n_test": len(test),
        "unique_share": float((freq == 1).mean()), "at_most_3_share": float((freq <= 3).mean()),
        "distinct_records": int(len(train.drop_duplicates())),
        "test_in_train": float(occurs_in(test, train, schema).mean()),
    }  # fmt: skip


def generators(settings: dict) -> list[tuple[str, str, dict]]:
    """``(label, registry name, parameters)`` of every release of the profile."""
    gan = lambda family: dict(epochs=settings[f"{family}_epochs"], batch_size=settings["batch_size"], threads=1)
    out = [("WGAN-GP", "wgan_gp", gan("wgan")), ("CTGAN", "ctgan", gan("ctgan")), ("TVAE", "tvae", gan("tvae")),
           ("Synthpop", "synthpop", {}), ("BayNet", "baynet", {"round_integers": True})]  # fmt: skip
    out += [(f"PrivBayes ε={e:g}", "privbayes", {"epsilon": float(e), "round_integers": True}) for e in settings["epsilons"]]
    return out


# --------------------------------------------------------------------------- cached synthesis (one function)


def synthesise(name: str, params: dict, train: pd.DataFrame, schema: Schema, n: int, seed: int,
               cache: bool = True) -> pd.DataFrame:  # fmt: skip
    """Fit generator ``name`` on ``train`` and sample ``n`` rows, cached by content (read through ``Cache.get``)."""
    cls = get_generator(name, **params).__class__
    key = make_key(version=VERSION, kind="mca-synthetic", data=fingerprint_table(train, schema), generator=name,
                   params=params, n=n, seed=seed, source=source_hash(cls))  # fmt: skip
    store = Cache(namespace="mca-synthetic")
    cats = {c: list(train[c].cat.categories) for c in schema.categorical}
    hit = store.get(key) if cache else None
    if hit is not None:
        arrays, meta = hit
        return decode_table(arrays["codes"], arrays["continuous"], schema, cats, columns=meta.get("columns"))
    gen = get_generator(name, **params)
    syn = gen.fit_sample(train, schema, n=n, seed=seed)
    if cache:
        save_table(store, key, syn, schema, categories=cats)
    return syn


def _attack_scores(release: pd.DataFrame, schema: Schema, name: str, params: dict, seed: int, cache: bool,
                   **attack_params) -> np.ndarray:  # fmt: skip
    """TableGAN-MCA scores of ``release`` (one copy, or N_s copies given as a list), cached by content."""
    copies = release if isinstance(release, list) else [release]
    key = make_key(version=VERSION, kind="mca-scores", data=[fingerprint_table(c, schema) for c in copies],
                   shadow=name, params=params, seed=seed, attack=attack_params,
                   source=[source_hash(TableGanMCA), source_hash(get_generator(name, **params).__class__)])  # fmt: skip
    store = Cache(namespace="mca-scores")
    hit = store.get(key) if cache else None
    if hit is not None:
        return hit[0]["scores"]
    attack = TableGanMCA(shadow_generator=name, shadow_params=params, seed=seed, **attack_params).fit(copies, schema)
    scores = attack.score(pd.concat(copies, ignore_index=True))
    if cache:
        store.save(key, {"scores": scores}, {"shadow_positive_rate": attack.shadow_positive_rate_})
    return scores


def _release_task(task: dict) -> dict:
    train, schema = task["train"], task["schema"]
    n_copies = task.get("n_releases", 1)
    # attack model (2): N_s samples of size n from the one fitted generator (the paper's S_1 ... S_Ns ~ P_g)
    syn = synthesise(task["name"], task["params"], train, schema, n_copies * len(train),
                     derive_seed(task["seed"], "mca-release", task["label"], 0), task["cache"])  # fmt: skip
    syn = match_precision(syn, train, schema)
    copies = [syn.iloc[i * len(train):(i + 1) * len(train)].reset_index(drop=True) for i in range(n_copies)]
    release = pd.concat(copies, ignore_index=True)
    out = {"label": task["label"], "generator": task["name"], "params": task["params"], "n_releases": n_copies}
    frame = pd.DataFrame({"frequency": record_frequency(release, schema), "member": occurs_in(release, train, schema)})
    if task["attack"]:
        frame["score"] = _attack_scores(copies if n_copies > 1 else copies[0], schema, task["name"], task["params"],
                                        derive_seed(task["seed"], "mca-attack", task["label"]), task["cache"])  # fmt: skip
    frame["distinct"] = ~release.duplicated().to_numpy()
    out["records"] = frame
    return out


def releases(profile: str = "quick", seed: int = 0, preprocess: bool = True, names=None, attack: bool = True,
             n_releases: int = 1, cache: bool = True, n_jobs: int | None = None, progress: bool = True,
             **overrides) -> list[dict]:  # fmt: skip
    """One release per generator of the profile (or those whose registry name is in ``names``), attacked.

    Returns
    -------
    list of dict
        ``label``, ``generator``, ``params``, ``n_releases`` and ``records``: a DataFrame
        with one row per released record: ``frequency`` (eq. 4, counted over all copies),
        ``member`` (occurs in the training data), ``score`` (TableGAN-MCA, when
        ``attack``) and ``distinct`` (first occurrence of its value).
    """
    settings = profile_settings("mca", profile, **overrides)
    if n_releases < 1:
        raise VrlibError(f"n_releases (N_s) must be >= 1, got {n_releases}")
    train, _, schema = data(seed, settings["n_train"], preprocess)
    gens = [g for g in generators(settings) if names is None or g[1] in names]
    unknown = sorted(set(names or ()) - set(REGISTRY))
    if unknown:
        raise VrlibError(f"unknown generator(s) {unknown}; choose among {sorted(REGISTRY)}")
    tasks = [dict(label=label, name=name, params=params, train=train, schema=schema, seed=seed, cache=cache,
                  attack=attack, n_releases=n_releases) for label, name, params in gens]  # fmt: skip
    return run(_release_task, tasks, n_jobs=n_jobs, desc="releases", progress=progress)


# --------------------------------------------------------------------------- summaries


def summary(results: list[dict]) -> pd.DataFrame:
    """One row per release: collision rates, Fig. 3 shares and the attack at the default threshold."""
    rows = []
    for r in results:
        f = r["records"]
        row = {
            "generator": r["label"], "n_releases": r["n_releases"], "n_released": len(f),
            "collision_rate": float(f.member.mean()),
            "collision_rate_distinct": float(f.member[f.distinct].mean()),
            "members_among_freq_gt3": float(f.member[f.frequency > 3].mean()) if (f.frequency > 3).any() else np.nan,
            "nonmembers_among_unique": float((~f.member[f.frequency == 1]).mean()) if (f.frequency == 1).any() else np.nan,
        }  # fmt: skip
        if "score" in f:
            s = f.score.to_numpy()
            t = s.mean() + 2 * s.std()
            m = recovery_metrics(s > t, f.member)
            row.update({"threshold": t, "n_flagged": m["n_flagged"], "n_true": m["n_true"],
                        "precision": m["precision"], "recall": m["recall"],
                        "auc_attack": _safe_auc(f.member, s), "auc_frequency": _safe_auc(f.member, f.frequency)})  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def _safe_auc(labels, scores) -> float:
    labels = np.asarray(labels, dtype=bool)
    return auc(labels, np.asarray(scores, dtype=float)) if 0 < labels.sum() < len(labels) else float("nan")


def frequency_histogram(records: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3: the number of released records that are members / non-members at each frequency."""
    return (records.groupby(["frequency", "member"]).size().unstack(fill_value=0)
            .reindex(columns=[True, False], fill_value=0).rename(columns={True: "members", False: "non_members"})
            .reset_index())  # fmt: skip


def precision_recall(records: pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """Precision and recall of flagging every record whose ``column`` is at least each threshold."""
    from sklearn.metrics import precision_recall_curve

    p, r, t = precision_recall_curve(records.member.to_numpy(), records[column].to_numpy(float))
    # scikit-learn ends the curve with (recall 0, precision 1), a point no threshold reaches: dropped
    return pd.DataFrame({"threshold": t, "precision": p[:-1], "recall": r[:-1]})


__all__ = ["PAPER", "data", "training_statistics", "generators", "synthesise", "releases",
           "summary", "frequency_histogram", "precision_recall"]  # fmt: skip
