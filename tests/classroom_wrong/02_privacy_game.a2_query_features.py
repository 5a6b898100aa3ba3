# Wrong answer kept for the tests: continuous attributes match when strictly below the target
# (< instead of <=), so records tied with the target are not counted.
def query_features(synthetic: pd.DataFrame, target: pd.Series, schema: Schema, subsets) -> np.ndarray:
    """Answers of the counting queries ``subsets`` (bit masks) on one synthetic dataset."""
    pattern = np.zeros(len(synthetic), dtype=np.int64)
    for f, c in enumerate(schema.columns):
        if c in schema.categorical:
            match = synthetic[c].astype(object).to_numpy() == target[c]
        else:
            match = synthetic[c].to_numpy(dtype=float) < float(target[c])
        pattern |= match.astype(np.int64) << f
    subsets = np.asarray(subsets, dtype=np.int64)
    return ((pattern[:, None] & subsets[None, :]) == subsets[None, :]).sum(axis=0)
