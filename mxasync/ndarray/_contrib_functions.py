"""Python-level functions of MXNet's ``mx.nd.contrib``: isinf, isfinite, isnan (comparisons
pushed as ops) and rand_zipfian (log-uniform candidate sampling)."""

from __future__ import annotations

import math

import numpy as np

from ..runtime.context import current_context
from .ndarray import NDArray

__all__ = ["isinf", "isfinite", "isnan", "rand_zipfian"]


def isinf(data: NDArray) -> NDArray:
    """1 where ``data`` is +inf or -inf, else 0 (same dtype as ``data``)."""
    return data.abs() == np.inf


def isfinite(data: NDArray) -> NDArray:
    """1 where ``data`` is neither infinite nor NaN, else 0."""
    return (data.abs() != np.inf) * (data == data)


def isnan(data: NDArray) -> NDArray:
    """1 where ``data`` is NaN, else 0."""
    return data != data


def rand_zipfian(true_classes: NDArray, num_sampled: int, range_max: int, ctx=None):
    """Draw ``num_sampled`` classes in ``[0, range_max)`` from the log-uniform (Zipfian) distribution
    ``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)``, with replacement.

    Returns ``(sampled_classes, expected_count_true, expected_count_sampled)``: the samples (int64)
    and the expected counts ``P(k) * num_sampled`` of the true classes and of the samples (float64).
    """
    from . import random

    ctx = ctx or current_context()
    log_range = math.log(range_max + 1)
    u = random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled = (u.exp() - 1).astype("int64") % range_max

    def expected(classes: NDArray) -> NDArray:
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled

    return sampled, expected(true_classes.as_in_context(ctx)), expected(sampled)
