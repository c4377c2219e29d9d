"""Creating NDArrays: ``mx.nd.empty/zeros/ones/full/array/arange`` and the ``*_like`` forms (MXNet 1.x names).

>>> import mxasync as mx
>>> mx.nd.full((2, 2), 7, dtype="int32").asnumpy().tolist()
[[7, 7], [7, 7]]
"""

from __future__ import annotations

import math

import numpy as np

from .._bfloat16 import canonical_dtype
from ..backends import get_backend
from ..base import MXAsyncError, MXAsyncValueError
from ..operator.tensor.init import arange_values
from ..runtime.context import Context, current_context
from ..runtime.run_context import FnProperty
from .ndarray import _DEFAULT_DTYPE, NDArray, _empty, _push

__all__ = ["empty", "zeros", "ones", "full", "array", "arange", "zeros_like", "ones_like"]


def _user_shape(shape, fn: str) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; a float, bool or negative dimension is refused (MXNet's rule)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        raise MXAsyncValueError(f"mx.nd.{fn}: shape must be an int or a tuple of ints, got {shape!r}") from None
    for i, d in enumerate(dims):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise MXAsyncValueError(f"mx.nd.{fn}: shape {shape!r} must hold integers, but dimension {i} is "
                                    f"{d!r} ({type(d).__name__})")
        if d < 0:
            raise MXAsyncValueError(f"mx.nd.{fn}: shape {shape!r} has a negative dimension {i} ({d})")
    return tuple(int(d) for d in dims)


def empty(shape, ctx: Context | None = None, dtype=None, stype: str | None = None, *, _fn: str = "empty") -> NDArray:
    """An uninitialised array (``mx.nd.empty``); ``stype`` 'row_sparse' or 'csr' gives an empty sparse one."""
    if stype not in (None, "default"):
        from .sparse import empty as sparse_empty

        return sparse_empty(stype, _user_shape(shape, _fn), ctx, dtype)
    return _empty(_user_shape(shape, _fn), dtype, ctx or current_context())


def full(shape, val, ctx: Context | None = None, dtype=None, out: NDArray | None = None, *,
         _fn: str = "full") -> NDArray:
    """An array of ``shape`` filled with ``val``; with ``out=`` that array is filled and returned."""
    if out is not None:
        if not isinstance(out, NDArray):
            raise MXAsyncError(f"mx.nd.{_fn}: out must be an NDArray, got {type(out).__name__}")
        want = _user_shape(shape, _fn)
        if tuple(out.shape) != tuple(want):
            raise MXAsyncValueError(f"mx.nd.{_fn}: out has shape {out.shape} but shape={want}")
        out[:] = val
        return out
    out = empty(shape, ctx, dtype, _fn=_fn)
    if np.ndim(val) != 0:
        out[:] = val
        return out
    data = out._data
    value = np.asarray(val, dtype=data.dtype)[()]

    def fill(rctx):
        data.fill(value)

    # one engine op named as MXNet's (_zeros, _ones, _full): the profiler shows it under that name
    _push(fill, out._ctx, [], [out._chunk.var], f"_{_fn}", out.size)
    return out


def zeros(shape, ctx: Context | None = None, dtype=None, out: NDArray | None = None, stype: str | None = None,
          **kwargs) -> NDArray:
    """Zeros (``mx.nd.zeros``); ``stype`` 'row_sparse' or 'csr' gives a sparse array holding no element."""
    if stype not in (None, "default"):
        from .sparse import zeros as sparse_zeros

        return sparse_zeros(stype, _user_shape(shape, "zeros"), ctx, dtype)
    return full(shape, 0, ctx, dtype, out, _fn="zeros")


def ones(shape, ctx: Context | None = None, dtype=None, out: NDArray | None = None, **kwargs) -> NDArray:
    return full(shape, 1, ctx, dtype, out, _fn="ones")


def zeros_like(other: NDArray, out: NDArray | None = None, name: str | None = None, **kwargs) -> NDArray:
    """Zeros shaped, typed and placed like ``other``. As MXNet 1.9.1's op (which has no params) other
    keywords such as ``dtype`` are accepted and ignored; ``out`` receives the zeros."""
    if out is not None:
        out[:] = 0
        return out
    return zeros(other.shape, other.context, other.dtype, stype=other.stype)


def ones_like(other: NDArray, out: NDArray | None = None, name: str | None = None, **kwargs) -> NDArray:
    """Ones shaped, typed and placed like ``other`` (other keywords, ``dtype`` among them, ignored as MXNet does)."""
    if out is not None:
        out[:] = 1
        return out
    return ones(other.shape, other.context, other.dtype)


def array(source, ctx: Context | None = None, dtype=None) -> NDArray:
    """An NDArray holding a copy of ``source`` (float32 unless ``dtype`` or an NDArray says otherwise); a
    sparse NDArray or a SciPy sparse matrix gives a sparse array (``mx.nd.sparse.array``)."""
    if getattr(source, "stype", "default") != "default" or _is_scipy_sparse(source):
        from .sparse import array as sparse_array

        return sparse_array(source, ctx, dtype)
    if isinstance(source, NDArray):
        dtype = dtype or source.dtype
        return source.astype(dtype).as_in_context(ctx or source.context)
    # MXNet 1.x: numpy arrays too are float32 by default (mx.nd.array(np.uint8 image) is float32)
    dtype = _DEFAULT_DTYPE if dtype is None else canonical_dtype(dtype)
    # a numpy array is copied once, straight into the new chunk (np.array first would copy it twice)
    arr = source if isinstance(source, np.ndarray) else np.array(source, dtype=dtype)
    out = empty(arr.shape, ctx, np.dtype(dtype))
    backend = get_backend(out._ctx.device_type)
    if backend.host_memory and isinstance(out._data, np.ndarray):
        out._data[...] = arr  # a fresh chunk has no pending ops: fill it now
    elif not backend.host_memory:
        # the device's own memory: its copy_from_host, on its copy lane (MXNet's COPY_TO_GPU), from a
        # private host copy (the caller may change ``source`` before the op runs)
        host = np.array(arr, dtype=out._data.dtype, order="C")
        data = out._data

        def upload(rctx):
            backend.copy_from_host(data, host, rctx)

        _push(upload, out._ctx, [], [out._chunk.var], "_copyto", out.size, FnProperty.COPY_TO_GPU)
    else:
        out[:] = arr
    return out


def _is_scipy_sparse(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse")


def arange(start, stop=None, step=1.0, repeat=1, ctx: Context | None = None, dtype=None) -> NDArray:
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise MXAsyncValueError("mx.nd.arange: step must not be 0")
    count = max(0, math.ceil((stop - start) / step))
    return array(arange_values(np, start, step, count, repeat, dtype or _DEFAULT_DTYPE), ctx, dtype or _DEFAULT_DTYPE)
