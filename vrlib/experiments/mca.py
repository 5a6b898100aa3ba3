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

from vrlib import synthesis
from vrlib.attacks.collision import TableGanMCA, frequency_share, match_precision, occurs_in, record_frequency
from vrlib.cache import Cache, fingerprint_table, make_key, source_hash
from vrlib.data import Schema, load, prepare, train_test_split
from vrlib.data.datasets import ADULT_COLUMNS
from vrlib.errors import VrlibError
from vrlib.experiments.profiles import profile_settings, register
from vrlib.generators import REGISTRY, get_generator
from vrlib.metrics import auc, recovery_metrics
from vrlib.parallel import derive_seed
from vrlib.play.pointwise import score_pointwise
from vrlib.synthesis import SynthesisJob

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

# The authors' split (their public code: scikit-learn's train_test_split(test_size=0.3, random_state=2) on the
# 45,222 complete Adult rows, adult.data then adult.test) and the index of the first five training rows their
# notebook prints (train_data.head()).
AUTHORS_SPLIT = {"test_size": 0.3, "random_state": 2}
AUTHORS_TRAIN_HEAD = (33716, 16224, 24357, 44698, 37191)
SPLITS = ("seeded", "authors")

# quick: the full training split, fewer epochs (WGAN-GP about 6 s per epoch on one shared CPU core).
register("mca", {
    "smoke": {"n_train": 1500, "wgan_epochs": 2, "tvae_epochs": 2, "ctgan_epochs": 1, "batch_size": 500,
              "epsilons": [1.0], "raw_generators": ["baynet"], "model2_generator": "baynet", "model2_n_releases": 2, "split": "seeded"},
    "quick": {"n_train": None, "wgan_epochs": 10, "tvae_epochs": 20, "ctgan_epochs": 5, "batch_size": 500,
              "epsilons": [1.0, 10.0, 100.0], "raw_generators": ["synthpop", "baynet", "tvae"],
              "model2_generator": "baynet", "model2_n_releases": 2, "split": "seeded"},
    "paper": {"n_train": None, "wgan_epochs": 300, "tvae_epochs": 300, "ctgan_epochs": 300, "batch_size": 500,
              "epsilons": [0.1, 1.0, 10.0, 100.0, 1000.0],
              "raw_generators": ["synthpop", "baynet", "wgan_gp", "wgan_wc", "tvae", "ctgan"],
              "model2_generator": "wgan_gp", "model2_n_releases": 2, "split": "authors"},
})  # fmt: skip


# --------------------------------------------------------------------------- the authors' pre-processing

MCA_MARRIED = ("Married-civ-spouse", "Married-AF-spouse")  # -> "Couple"; every other status -> "Single"
MCA_CAPITAL_HIGH = {"capital-gain": 7647.23, "capital-loss": 1874.19}  # above: "high"; 0: "zero"; else "low"
MCA_HOURS_BINS = 45


def preprocess_adult_mca(df: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, Schema]:
    """Adult as Hu et al. (TableGAN-MCA, §5.2) pre-processed it: 1 continuous column, 11 categorical, the label.

    The authors' public pre-processing, written again from its description:

    * ``age`` stays continuous (whole years);
    * ``fnlwgt`` and ``education`` are dropped (``education-num`` carries the same
      information), ``education-num`` becomes categorical (16 levels);
    * ``capital-gain`` / ``capital-loss`` become 3 levels: ``zero``, ``low``, ``high``
      (above 7,647.23 and 1,874.19 respectively);
    * ``marital-status`` becomes 2 levels: ``Couple`` (married, spouse present or in
      the armed forces) and ``Single`` (every other status);
    * ``native-country`` becomes 2 levels: ``US`` and ``Non-US``;
    * ``hours-per-week`` falls into 45 equal-width bins between its minimum and
      maximum (the bin index is the category);
    * ``income`` is the label.

    The paper counts "1 numerical feature, 12 categorical features and 1 binary label";
    the authors' code has 13 columns: age plus 12 categorical ones, the label among them.

    Parameters
    ----------
    df, schema : the output of :func:`vrlib.data.load_adult` (complete rows)

    Returns
    -------
    df : DataFrame
        13 columns, in the authors' order; index kept.
    schema : Schema
    """
    needed = [c for c in ADULT_COLUMNS if c not in ("fnlwgt", "education")]  # the authors drop these two
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise VrlibError(f"preprocess_adult_mca needs Adult's columns; missing {missing} (load it with load('adult'))")
    if df[needed].isna().any().any():
        raise VrlibError("preprocess_adult_mca needs complete rows: load Adult without keep_missing")
    out = pd.DataFrame(index=df.index)
    out["age"] = df["age"].astype("float64")
    out["workclass"] = df["workclass"].astype(str)
    out["education-num"] = df["education-num"].astype(int)
    out["marital-status"] = np.where(df["marital-status"].astype(str).isin(MCA_MARRIED), "Couple", "Single")
    for c in ("occupation", "relationship", "race", "sex"):
        out[c] = df[c].astype(str)
    for c, high in MCA_CAPITAL_HIGH.items():
        v = df[c].to_numpy(dtype=np.float64)
        out[c] = np.where(v == 0, "zero", np.where(v > high, "high", "low"))
    hours = df["hours-per-week"].to_numpy(dtype=np.float64)
    edges = np.linspace(hours.min(), hours.max(), MCA_HOURS_BINS + 1)
    out["hours-per-week"] = np.searchsorted(edges[1:-1], hours, side="right")
    out["native-country"] = np.where(df["native-country"].astype(str) == "United-States", "US", "Non-US")
    out["income"] = df["income"].astype(str)
    # age keeps the input schema's public domain, so PrivBayes stays ε-DP on the pre-processed table.
    new_schema = Schema([c for c in out.columns if c != "age"], ["age"], dict(schema.subset(["age"]).domains))
    return prepare(out, new_schema), new_schema


def data(seed: int = 0, n_train: int | None = None, preprocess: bool = True, split: str = "seeded"):
    """``(train, test, schema)``: Adult (pre-processed as the paper unless ``preprocess=False``), split 70/30.

    Parameters
    ----------
    seed : int
        Seeds the ``seeded`` split and the subsample.
    n_train : int or None
        Keep a seeded subsample of the training split (the smoke profile).
    preprocess : bool
        The split does not depend on it (the same rows either way).
    split : {"seeded", "authors"}
        ``seeded``: :func:`vrlib.data.train_test_split` under a seed derived from ``seed``
        (rows in file order).  ``authors``: the authors' rows, in their order —
        scikit-learn's ``train_test_split`` with ``test_size=0.3, random_state=2`` on the
        complete rows in file order (:data:`AUTHORS_SPLIT`), which reproduces the first
        training rows their notebook prints (:data:`AUTHORS_TRAIN_HEAD`) and Table 3.
    """
    if split not in SPLITS:
        raise VrlibError(f"split must be one of {SPLITS}, got {split!r}")
    df, schema = load("adult")
    if preprocess:
        df, schema = preprocess_adult_mca(df, schema)
    if split == "authors":
        from sklearn.model_selection import train_test_split as sklearn_split

        train_pos, test_pos = sklearn_split(
            np.arange(len(df)), test_size=AUTHORS_SPLIT["test_size"], random_state=AUTHORS_SPLIT["random_state"]
        )
        train, test = df.iloc[train_pos], df.iloc[test_pos]
    else:
        train, test = train_test_split(df, 0.3, seed=derive_seed(seed, "mca-split"))
    if n_train is not None and n_train < len(train):
        keep = np.sort(
            np.random.default_rng(derive_seed(seed, "mca-subsample")).choice(len(train), n_train, replace=False)
        )
        train = train.iloc[keep]
    return train, test, schema


def training_statistics(train: pd.DataFrame, test: pd.DataFrame, schema: Schema) -> dict:
    """Table 3: sizes and the share of training records that are unique / occur at most 3 times.

    ``at_most_3_share`` counts as the paper's Table 3 does: the distinct training records
    seen at most 3 times, divided by the number of training records
    (:func:`~vrlib.attacks.collision.frequency_share` with ``count="distinct"``; see
    :func:`table3_definitions`); ``at_most_3_share_records`` counts records instead (the
    probability that a training record occurs at most 3 times).
    """
    return {
        "n_train": len(train),
        "n_test": len(test),
        "unique_share": frequency_share(train, schema, 1),
        "at_most_3_share": frequency_share(train, schema, 3, count="distinct"),
        "at_most_3_share_records": frequency_share(train, schema, 3),
        "distinct_records": int(len(train.drop_duplicates())),
        "test_in_train": float(occurs_in(test, train, schema).mean()),
    }


# The ways to read Table 3's Pr[#x <= 3] ("proportion of training data with frequency less than 3"):
# (label, count, per) for frequency_share.
TABLE3_DEFINITIONS = (
    ("records with #x <= k / records", "records", "records"),
    ("distinct records with #x <= k / records", "distinct", "records"),
    ("distinct records with #x <= k / distinct records", "distinct", "distinct"),
)


def table3_definitions(seed: int = 0, splits=SPLITS) -> pd.DataFrame:
    """Every reading of Table 3 on every split: which one gives the paper's 79.39 % and 86.07 %.

    One row per (split, definition): ``unique_share`` (k = 1), ``below_3_share``
    (k = 2, the caption's "less than 3"), ``at_most_3_share`` (k = 3), the number of
    training and distinct training records, and ``matches_paper``: both shares equal the
    paper's to the two decimals of a percentage it prints.
    """
    rows = []
    for split in splits:
        train, _, schema = data(seed, split=split)
        for label, count, per in TABLE3_DEFINITIONS:
            share = {k: frequency_share(train, schema, k, count=count, per=per) for k in (1, 2, 3)}
            rows.append(
                {
                    "split": split,
                    "definition": label,
                    "count": count,
                    "per": per,
                    "n_train": len(train),
                    "distinct_records": int(len(train.drop_duplicates())),
                    "unique_share": share[1],
                    "below_3_share": share[2],
                    "at_most_3_share": share[3],
                }
            )
    out = pd.DataFrame(rows)
    same = lambda v, p: np.round(100 * v, 2) == np.round(100 * p, 2)  # noqa: E731
    out["matches_paper"] = same(out.unique_share, PAPER["unique_share"]) & same(
        out.at_most_3_share, PAPER["at_most_3_share"]
    )
    return out


def generators(settings: dict) -> list[tuple[str, str, dict]]:
    """``(label, registry name, parameters)`` of every release of the profile."""
    gan = lambda family: dict(epochs=settings[f"{family}_epochs"], batch_size=settings["batch_size"], threads=1)
    out = [("WGAN-GP", "wgan_gp", gan("wgan")), ("WGAN-WC", "wgan_wc", gan("wgan")), ("CTGAN", "ctgan", gan("ctgan")), ("TVAE", "tvae", gan("tvae")),
           ("Synthpop", "synthpop", {}), ("BayNet", "baynet", {"round_integers": True})]  # fmt: skip
    out += [
        (f"PrivBayes ε={e:g}", "privbayes", {"epsilon": float(e), "round_integers": True}) for e in settings["epsilons"]
    ]
    return out


GANS = ("wgan_gp", "wgan_wc", "ctgan", "tvae")


def paper_profile_fits(profile: str = "paper") -> dict[str, int]:
    """How many times the notebook fits each GAN under ``profile``: registry name -> number of fits.

    Each release is one fit plus one shadow fit per released copy (attack model (1): one);
    the releases without pre-processing are one fit each (no attack); attack model (2) fits
    its generator once more (``N_s`` copies from one model) and a shadow per copy.
    """
    settings = profile_settings("mca", profile)
    counts = {name: 2 for _, name, _ in generators(settings) if name in GANS}
    for name in settings["raw_generators"]:
        if name in counts:
            counts[name] += 1
    if settings["model2_generator"] in counts:
        counts[settings["model2_generator"]] += 1 + settings["model2_n_releases"]
    return counts


# One fit on the 31,655 pre-processed Adult training rows, batch 500, one PyTorch thread, in CPU seconds:
# the cost of an epoch and the fixed cost (CTGAN / TVAE: mostly the Gaussian mixture of age), measured by
# benchmarks/bench_collision.py --part generators (load average 3.4-3.8; an earlier run with fewer epochs gave
# 2.42 / 2.38 / 3.53 s per epoch for WGAN-GP / WGAN-WC / CTGAN).
MEASURED_FIT_COST = {
    "machine": "a 2-core CPU machine shared with other jobs",
    "epoch_cpu_s": {"wgan_gp": 2.625, "wgan_wc": 2.287, "ctgan": 2.865, "tvae": 0.382},
    "fixed_cpu_s": {"wgan_gp": 1.49, "wgan_wc": 0.0, "ctgan": 7.94, "tvae": 5.05},
}
_LABELS = {"wgan_gp": "WGAN-GP", "wgan_wc": "WGAN-WC", "ctgan": "CTGAN", "tvae": "TVAE"}


def predicted_cost(profile: str = "paper") -> pd.DataFrame:
    """The predicted CPU cost of every GAN fit the notebook makes under ``profile`` (:data:`MEASURED_FIT_COST`).

    One row per GAN: ``fits`` (:func:`paper_profile_fits`), ``epochs`` (the profile's),
    ``minutes_300_epochs`` (one fit at the paper's training) and ``cpu_minutes`` (all its
    fits at the profile's epochs).  Fits without pre-processing (15 columns) are given the
    pre-processed table's cost.
    """
    settings = profile_settings("mca", profile)
    rows_scale = (settings["n_train"] or PAPER["n_train"]) / PAPER[
        "n_train"
    ]  # an epoch costs in proportion to the rows
    epochs = {
        "wgan_gp": settings["wgan_epochs"],
        "wgan_wc": settings["wgan_epochs"],
        "ctgan": settings["ctgan_epochs"],
        "tvae": settings["tvae_epochs"],
    }
    epoch_s, fixed_s = MEASURED_FIT_COST["epoch_cpu_s"], MEASURED_FIT_COST["fixed_cpu_s"]
    rows = [
        {
            "generator": _LABELS[name],
            "fits": n,
            "epochs": epochs[name],
            "minutes_300_epochs": (fixed_s[name] + 300 * epoch_s[name]) / 60,
            "cpu_minutes": n * (fixed_s[name] + epochs[name] * epoch_s[name] * rows_scale) / 60,
        }
        for name, n in paper_profile_fits(profile).items()
    ]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- releases and their attack


def _release_job(
    label: str, name: str, params: dict, train: pd.DataFrame, schema: Schema, n: int, seed: int
) -> SynthesisJob:
    """The one release of generator ``label``: fitted on ``train``, ``n`` rows sampled (vrlib.synthesis)."""
    return SynthesisJob(
        train,
        schema,
        name,
        n,
        derive_seed(seed, "mca-fit", label),
        derive_seed(seed, "mca-sample", label),
        params=params,
    )


def synthesise(
    name: str, params: dict, train: pd.DataFrame, schema: Schema, n: int, seed: int, cache: bool = True
) -> pd.DataFrame:
    """Fit generator ``name`` on ``train`` and sample ``n`` rows, through the shared cached synthesis path."""
    job = _release_job(name, name, params, train, schema, n, seed)
    (table,) = synthesis.synthesize_tables([job], cache=cache, n_jobs=1, progress=False)
    return table


def _attack_key(
    copies: list[pd.DataFrame], schema: Schema, name: str, params: dict, seed: int, attack_params: dict
) -> str:
    # score_pointwise: the loop that stores the scores
    return make_key(
        kind="mca-scores",
        data=[fingerprint_table(c, schema) for c in copies],
        shadow=name,
        params=params,
        seed=seed,
        attack=attack_params,
        source=source_hash(TableGanMCA, get_generator(name, **params).__class__, _attack_task, score_pointwise),
    )


ATTACK = "tablegan_mca"  # the one attack of a release, by its name in the scores


def _attack_task(job: tuple[dict, list]) -> dict:
    """TableGAN-MCA scores of one release (one copy, or N_s copies); runs in a worker: ``{ATTACK: (scores, {})}``."""
    task, _ = job
    copies = task["copies"]
    attack = TableGanMCA(
        shadow_generator=task["name"], shadow_params=task["params"], seed=task["seed"], **task["attack_params"]
    ).fit(copies if len(copies) > 1 else copies[0], task["schema"])
    return {ATTACK: (attack.score(pd.concat(copies, ignore_index=True)), {})}


def releases(
    profile: str = "quick",
    seed: int = 0,
    preprocess: bool = True,
    names=None,
    attack: bool = True,
    n_releases: int = 1,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = True,
    **overrides,
) -> list[dict]:
    """One release per generator of the profile (or those whose registry name is in ``names``), attacked.

    The releases are made by :func:`vrlib.synthesis.synthesize` and the attacks by
    :func:`vrlib.parallel.run`; both return their results to this process, which writes
    the cache (workers need no shared disk).

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
    train, _, schema = data(seed, settings["n_train"], preprocess, settings["split"])
    gens = [g for g in generators(settings) if names is None or g[1] in names]
    unknown = sorted(set(names or ()) - set(REGISTRY))
    if unknown:
        raise VrlibError(f"unknown generator(s) {unknown}; choose among {sorted(REGISTRY)}")
    # attack model (2): N_s samples of size n from the one fitted generator (the paper's S_1 ... S_Ns ~ P_g)
    jobs = [
        _release_job(label, name, params, train, schema, n_releases * len(train), seed) for label, name, params in gens
    ]
    made = synthesis.synthesize(jobs, cache=cache, n_jobs=n_jobs, desc="releases", progress=progress)
    out, attacks = [], []
    for (label, name, params), job, arrays in zip(gens, jobs, made):
        syn = match_precision(job.decode(arrays), train, schema)
        copies = [syn.iloc[i * len(train) : (i + 1) * len(train)].reset_index(drop=True) for i in range(n_releases)]
        release = pd.concat(copies, ignore_index=True)
        records = pd.DataFrame(
            {
                "frequency": record_frequency(release, schema),
                "member": occurs_in(release, train, schema),
                "distinct": ~release.duplicated().to_numpy(),
            }
        )
        out.append({"label": label, "generator": name, "params": params, "n_releases": n_releases, "records": records})
        if attack:
            attacks.append(
                dict(
                    copies=copies,
                    schema=schema,
                    name=name,
                    params=params,
                    attack_params={},
                    seed=derive_seed(seed, "mca-attack", label),
                )
            )
    if attack:
        for r, scores in zip(out, _scores(attacks, cache, n_jobs, progress)):
            r["records"]["score"] = scores
    return out


def _scores(tasks: list[dict], cache: bool, n_jobs, progress: bool) -> list[np.ndarray]:
    """Attack scores of every task: from the cache, else computed in parallel and written here."""
    scored = score_pointwise(
        tasks,
        (ATTACK,),
        cache=Cache(namespace="mca-scores") if cache else None,
        score=_attack_task,
        key=lambda t, _: _attack_key(t["copies"], t["schema"], t["name"], t["params"], t["seed"], t["attack_params"]),
        n_records=lambda t: sum(len(c) for c in t["copies"]),
        n_jobs=n_jobs,
        progress=progress,
    )
    return [per[ATTACK][0] for per in scored]


# --------------------------------------------------------------------------- summaries


def summary(results: list[dict]) -> pd.DataFrame:
    """One row per release: collision rates, Fig. 3 shares and the attack at the default threshold."""
    rows = []
    for r in results:
        f = r["records"]
        row = {
            "generator": r["label"],
            "n_releases": r["n_releases"],
            "n_released": len(f),
            "collision_rate": float(f.member.mean()),
            "collision_rate_distinct": float(f.member[f.distinct].mean()),
            "members_among_freq_gt3": float(f.member[f.frequency > 3].mean()) if (f.frequency > 3).any() else np.nan,
            "nonmembers_among_unique": float((~f.member[f.frequency == 1]).mean())
            if (f.frequency == 1).any()
            else np.nan,
        }
        if "score" in f:
            s = f.score.to_numpy()
            t = s.mean() + 2 * s.std()
            m = recovery_metrics(s > t, f.member)
            row.update(
                {
                    "threshold": t,
                    "n_flagged": m["n_flagged"],
                    "n_true": m["n_true"],
                    "precision": m["precision"],
                    "recall": m["recall"],
                    "auc_attack": _safe_auc(f.member, s),
                    "auc_frequency": _safe_auc(f.member, f.frequency),
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _safe_auc(labels, scores) -> float:
    labels = np.asarray(labels, dtype=bool)
    return auc(labels, np.asarray(scores, dtype=float)) if 0 < labels.sum() < len(labels) else float("nan")


def frequency_histogram(records: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3: the number of released records that are members / non-members at each frequency."""
    return (
        records.groupby(["frequency", "member"])
        .size()
        .unstack(fill_value=0)
        .reindex(columns=[True, False], fill_value=0)
        .rename(columns={True: "members", False: "non_members"})
        .reset_index()
    )


def precision_recall(records: pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """Precision and recall of flagging every record whose ``column`` is at least each threshold."""
    from sklearn.metrics import precision_recall_curve

    p, r, t = precision_recall_curve(records.member.to_numpy(), records[column].to_numpy(float))
    # scikit-learn ends the curve with (recall 0, precision 1), a point no threshold reaches: dropped
    return pd.DataFrame({"threshold": t, "precision": p[:-1], "recall": r[:-1]})


__all__ = [
    "PAPER",
    "preprocess_adult_mca",
    "AUTHORS_SPLIT",
    "AUTHORS_TRAIN_HEAD",
    "data",
    "training_statistics",
    "table3_definitions",
    "paper_profile_fits",
    "predicted_cost",
    "MEASURED_FIT_COST",
    "generators",
    "synthesise",
    "releases",
    "summary",
    "frequency_histogram",
    "precision_recall",
]
