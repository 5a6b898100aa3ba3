# Wrong answer kept for the tests: a diagonal bandwidth (each column's variance alone), which
# ignores the correlations that the full covariance of Scott's rule carries.
def kde_log_density(data, points) -> np.ndarray:
    """Log of the Gaussian KDE (Scott's bandwidth, full covariance) of ``data`` at ``points``."""
    data, points = np.asarray(data, dtype=float), np.asarray(points, dtype=float)
    n, d = data.shape
    beta = n ** (-1.0 / (d + 4))
    var = data.var(axis=0, ddof=1) * beta**2
    sq = (((points[:, None, :] - data[None, :, :]) ** 2) / var).sum(axis=2)
    log_kernel = -0.5 * sq - 0.5 * d * np.log(2 * np.pi) - 0.5 * np.log(var).sum()
    return logsumexp(log_kernel, axis=1) - np.log(n)
