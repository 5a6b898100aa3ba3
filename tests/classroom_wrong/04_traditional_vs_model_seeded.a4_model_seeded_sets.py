# Wrong answer kept for the tests: OUT drops the target but adds no reference record, so OUT
# datasets are one record smaller than IN ones (the attack could then read the size).
def model_seeded_sets(dataset, target, reference, n_games: int):
    """The model-seeded game's training datasets (IN first) and their labels (1 = IN)."""
    dataset = np.asarray(dataset)
    n_in = n_games // 2
    out = dataset[dataset != target]
    sets = [dataset.copy() for _ in range(n_in)] + [out.copy() for _ in range(n_games - n_in)]
    return sets, np.array([1] * n_in + [0] * (n_games - n_in))
