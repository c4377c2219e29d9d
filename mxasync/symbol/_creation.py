"""``mx.sym.zeros/ones/full/arange/eye``: graph nodes that make an array from nothing (MXNet 1.9).

>>> import mxasync as mx
>>> mx.sym.zeros((2, 3)).infer_shape()[1], mx.sym.arange(0, 5).infer_shape()[1]
([(2, 3)], [(5,)])
"""

from __future__ import annotations

import numpy as np

from .register import create

__all__ = ["zeros", "ones", "full", "arange", "linspace", "eye", "histogram"]


def _dtype(dtype) -> str:
    return np.dtype(dtype if dtype is not None else np.float32).name


def zeros(shape, dtype=None, name=None, **kwargs):
    """A node whose output is zeros of ``shape``."""
    return create("_zeros", [], dict(shape=shape, dtype=_dtype(dtype), **kwargs), name=name)


def ones(shape, dtype=None, name=None, **kwargs):
    """A node whose output is ones of ``shape``."""
    return create("_ones", [], dict(shape=shape, dtype=_dtype(dtype), **kwargs), name=name)


def full(shape, val, dtype=None, name=None, **kwargs):
    """A node whose output is ``val`` everywhere in ``shape``."""
    return create("_full", [], dict(shape=shape, value=val, dtype=_dtype(dtype), **kwargs), name=name)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """A node whose output is ``start, start + step, ...`` below ``stop`` (each value ``repeat`` times)."""
    return create("_arange", [], dict(start=start, stop=stop, step=step, repeat=repeat, infer_range=infer_range,
                                      dtype=_dtype(dtype)), name=name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """A node whose output is ``num`` evenly spaced values from ``start`` to ``stop``."""
    return create("_linspace", [], dict(start=start, stop=stop, num=num, endpoint=endpoint, dtype=_dtype(dtype)),
                  name=name)


def eye(N, M=0, k=0, dtype=None, name=None, **kwargs):  # noqa: N803 - MXNet's argument names
    """A node whose output has ones on diagonal ``k`` of an ``N`` x ``M`` (``M=0``: square) matrix."""
    return create("_eye", [], dict(N=N, M=M, k=k, dtype=_dtype(dtype), **kwargs), name=name)


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002 - MXNet's argument name
    """Nodes of ``(counts, bin_edges)`` of ``a``: ``bins`` equal bins over ``range`` (required), or the edges
    given as a Symbol (MXNet's ``mx.sym.histogram``)."""
    from ..base import MXAsyncError
    from .symbol import Symbol

    if isinstance(bins, Symbol):
        return create("_histogram", [a, bins], dict(kwargs))
    if range is None:
        raise MXAsyncError("mx.sym.histogram: range=(lower, upper) is required with a bin count (as in MXNet)")
    return create("_histogram", [a], dict(bin_cnt=int(bins), range=tuple(range), **kwargs))
