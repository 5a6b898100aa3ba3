# Wrong answer kept for the tests: one plain cosine over the concatenated one-hot and continuous
# blocks, ignoring eq. 5's F_cat/F and F_cont/F weights and the zero-vector rule.
def generalised_cosine(a: EncodedTable, b: EncodedTable) -> np.ndarray:
    """Eq. 5 distances between the records of ``a`` (rows) and those of ``b`` (columns)."""
    xa = np.hstack([a.onehot, a.continuous])
    xb = np.hstack([b.onehot, b.continuous])
    na, nb = np.linalg.norm(xa, axis=1), np.linalg.norm(xb, axis=1)
    return 1.0 - (xa @ xb.T) / np.outer(na, nb)
