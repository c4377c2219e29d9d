"""Statistical checks of random generators: chi-square over buckets, mean and variance bands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def gen_buckets_probs_with_ppf(ppf: Callable[[float], float], nbuckets: int) -> tuple[list, list]:
    """``nbuckets`` equal-probability buckets ``(ppf(i/n), ppf((i+1)/n))`` and their probabilities.

    >>> gen_buckets_probs_with_ppf(lambda q: q * 2, 2)
    ([(0.0, 1.0), (1.0, 2.0)], [0.5, 0.5])
    """
    if nbuckets <= 0:
        raise ValueError(f"gen_buckets_probs_with_ppf: nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def _bucket_counts(samples: np.ndarray, buckets: list) -> np.ndarray:
    counts = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):  # continuous: (low, high) ranges, ascending, disjoint
        edges = np.empty(2 * len(buckets), dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            if low > high or (i + 1 < len(buckets) and high > buckets[i + 1][0]):
                raise ValueError(f"chi_square_check: buckets must be ascending and disjoint, got {buckets}")
            edges[2 * i], edges[2 * i + 1] = low, high
        # a sample in range i falls right of edge 2i and left of edge 2i+1
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            counts[i] = np.count_nonzero(ids == i)
    else:  # discrete: each bucket is one value
        for i, value in enumerate(buckets):
            counts[i] = np.count_nonzero(samples == value)
    return counts


def chi_square_check(generator: Callable[[int], Any], buckets: list, probs: list,
                     nsamples: int = 1000000) -> tuple[float, np.ndarray, np.ndarray]:
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Buckets are ``(low, high)`` ranges for continuous generators or the values themselves
    for discrete ones. Returns ``(p_value, observed_counts, expected_counts)``. Needs scipy.
    """
    import scipy.stats as ss

    if not isinstance(buckets, list):
        raise TypeError(f"chi_square_check: buckets must be a list, got {type(buckets).__name__}")
    if len(probs) != len(buckets):
        raise ValueError(f"chi_square_check: {len(buckets)} buckets but {len(probs)} probabilities")
    samples = generator(nsamples)
    samples = samples.asnumpy() if hasattr(samples, "asnumpy") else np.asarray(samples)
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    observed = _bucket_counts(samples.reshape(-1), buckets)
    # scipy insists both totals agree; MXNet's expected counts are truncated, so rescale them
    f_exp = expected.astype(np.float64) * (observed.sum() / max(expected.sum(), 1))
    _, p = ss.chisquare(f_obs=observed, f_exp=f_exp)
    return float(p), observed, expected


def verify_generator(generator: Callable[[int], Any], buckets: list, probs: list, nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list[float]:
    """Repeat :func:`chi_square_check` ``nrepeat`` times; fail unless at least
    ``success_rate`` of the p-values exceed ``alpha``. Returns the p-values."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    pvalues = [r[0] for r in results]
    if (np.array(pvalues) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(
            f"Generator test fails, Chi-square p={pvalues}, obs_freq={[r[1] for r in results]}, "
            f"expected_freq={[r[2] for r in results]}.\nbuckets={buckets}, probs={probs}")
    return pvalues


def mean_check(generator: Callable[[int], Any], mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample mean lies within ``mu +- 3 sigma / sqrt(n)``."""
    mean = np.asarray(generator(nsamples)).mean()
    band = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - band < mean < mu + band)


def var_check(generator: Callable[[int], Any], sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance lies within ``sigma**2 +- 3 sqrt(2 sigma**4 / (n - 1))``."""
    var = np.asarray(generator(nsamples)).var(ddof=1)
    band = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - band < var < sigma ** 2 + band)
