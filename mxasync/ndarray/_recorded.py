"""Views of recorded arrays become ops, so gradients flow through them.

Outside ``autograd.record()``, ``x.reshape``, ``x[key]``, ``x.astype`` and ``x.copy()``
are views or plain copies; while recording, an array in a graph takes these paths
instead, which call registered ops (``Reshape``, ``slice``, ``take``, ``Cast``,
``_copy``) that the tape records like any other.

>>> import mxasync as mx
>>> x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]]); x.attach_grad()
>>> with mx.autograd.record():
...     y = (x[1] * 2).sum()
>>> y.backward()
>>> x.grad.asnumpy().tolist()
[[0.0, 0.0], [2.0, 2.0]]
"""

from __future__ import annotations

import numpy as np

from ..base import MXAsyncError
from ._invoke import invoke
from .ndarray import NDArray, _empty

__all__ = ["reshape", "getitem", "astype", "copy"]


def reshape(arr: NDArray, shape: tuple) -> NDArray:
    return invoke("Reshape", [arr], shape=tuple(shape))


def _is_advanced(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (list, tuple, np.ndarray)) for k in keys)


def _advanced(arr: NDArray, key) -> NDArray:
    """Advanced (and mixed) indexing of a recorded array as ``take`` from the flattened array.

    numpy indexes an ``arange`` of the flat positions with the very key, which gives both the
    result's shape and the positions each element comes from, whatever mix of ints, slices,
    None and index arrays the key holds; ``take``'s gradient scatters back (adding repeats).
    """
    if any(getattr(k, "dtype", np.dtype(np.int64)).kind not in "iub"
           for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, np.ndarray)):
        raise MXAsyncError(f"autograd: only integer index arrays are differentiable, got {key!r}")
    try:
        pos = np.arange(arr.size, dtype=np.int64).reshape(arr.shape)[key]
    except IndexError as err:
        raise MXAsyncError(f"autograd: index {key!r} for an array of shape {arr.shape}: {err}") from None
    indices = _empty(pos.shape or (1,), np.int64, arr.context)
    indices[:] = pos.reshape(pos.shape or (1,))
    flat = reshape(arr, (-1,)) if arr.ndim != 1 else arr
    return invoke("take", [flat, indices], axis=0, mode="clip")


def getitem(arr: NDArray, key) -> NDArray:
    """Indexing of a recorded array as differentiable ops: basic indexing (ints, slices, None,
    Ellipsis) as ``slice`` + ``Reshape``, advanced indexing as ``take`` (see :func:`_advanced`)."""
    if _is_advanced(key):
        return _advanced(arr, key)
    keys = key if isinstance(key, tuple) else (key,)
    if any(k is None for k in keys):
        # new axes (None) only add size-1 dimensions: index without them, then reshape to numpy's shape
        shape = np.broadcast_to(np.empty((), dtype=np.bool_), arr.shape)[keys].shape or (1,)
        stripped = tuple(k for k in keys if k is not None)
        return reshape(getitem(arr, stripped if stripped else slice(None)), shape)
    if sum(k is Ellipsis for k in keys) > 1:
        raise MXAsyncError(f"autograd: an index can have only one Ellipsis, got {key!r}")
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        keys = keys[:i] + (slice(None),) * (arr.ndim - len(keys) + 1) + keys[i + 1:]
    if len(keys) > arr.ndim:
        raise MXAsyncError(f"autograd: too many indices {key!r} for an array of shape {arr.shape}")
    begin, end, step, shape = [], [], [], []
    for d, k in enumerate(keys):
        n = arr.shape[d]
        if isinstance(k, slice):
            b, e, s = k.indices(n)
            begin.append(b)
            end.append(e if e >= 0 else None)
            step.append(s)
            shape.append(len(range(b, e, s)))
        else:
            k = int(k)
            if not -n <= k < n:
                raise MXAsyncError(f"index {k} is out of bounds for axis {d} with size {n}")
            k %= n
            begin.append(k)
            end.append(k + 1)
            step.append(1)
    shape += list(arr.shape[len(keys):])
    out = invoke("slice", [arr], begin=tuple(begin), end=tuple(end), step=tuple(step))
    shape = tuple(shape) or (1,)
    return out if out.shape == shape else reshape(out, shape)


def astype(arr: NDArray, dtype) -> NDArray:
    return invoke("Cast", [arr], dtype=np.dtype(dtype).name)


def copy(arr: NDArray) -> NDArray:
    return invoke("_copy", [arr])
