"""Python-level functions of MXNet's ``mx.sym.contrib``: rand_zipfian (log-uniform candidate sampling)."""

from __future__ import annotations

import math

from . import random
from .symbol import Symbol

__all__ = ["rand_zipfian"]


def rand_zipfian(true_classes: Symbol, num_sampled: int, range_max: int):
    """Symbols ``(sampled_classes, expected_count_true, expected_count_sampled)``: ``num_sampled`` draws
    from ``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)`` on ``[0, range_max)`` and the
    expected counts ``P(k) * num_sampled`` (as :func:`mxasync.ndarray.contrib.rand_zipfian`)."""
    log_range = math.log(range_max + 1)
    u = random.uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled = (u.exp() - 1).astype("int64") % range_max

    def expected(classes: Symbol) -> Symbol:
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled

    return sampled, expected(true_classes), expected(sampled)
