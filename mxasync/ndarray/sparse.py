"""``mx.nd.sparse``: creating csr / row_sparse arrays, and the ops (every ``mx.nd`` op is here too;
``mx.nd.sparse.retain`` is ``_sparse_retain``).

>>> import mxasync as mx
>>> import numpy as np
>>> r = mx.nd.sparse.row_sparse_array(([[1., 2.]], [2]), shape=(4, 2))
>>> r.asnumpy().tolist()
[[0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
>>> float(mx.nd.sparse.zeros('csr', (2, 2)).asnumpy().sum())
0.0
"""

from __future__ import annotations

import numpy as np

from ..backends import get_backend
from ..base import MXAsyncError, MXAsyncValueError
from ..operator.sparse import formats as st
from ..operator.sparse.formats import CSR, DEFAULT, RSP
from ..runtime.context import Context, current_context
from ._invoke import invoke
from ._sparse_array import (
    BaseSparseNDArray,
    CSRNDArray,
    RowSparseNDArray,
    cast,
    check_value,
    map_arrays,
    new_sparse,
)
from .ndarray import NDArray

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix", "row_sparse_array", "zeros",
           "empty", "array", "add", "subtract", "multiply", "divide", "retain"]


def _dtype(src, dtype):
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(src, (NDArray, np.ndarray)) or hasattr(src, "dtype") and hasattr(src, "tocsr"):
        return np.dtype(src.dtype)
    return np.dtype(np.float32)


def _host(a, dtype=None):
    if isinstance(a, NDArray):
        a = a.asnumpy()
    return np.asarray(a, dtype=dtype)


def _is_scipy(x) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:
        return False
    return sp.issparse(x)


def _shape_arg(x) -> bool:
    return isinstance(x, tuple) and len(x) > 0 and all(isinstance(d, (int, np.integer)) for d in x)


def _onto(value, ctx: Context):
    """The host ``value`` as arrays of ``ctx``'s device (on a host backend, the same arrays)."""
    backend = get_backend(ctx.device_type)
    return map_arrays(value, lambda a: backend.asarray(a, ctx))


def _from_sparse(x: BaseSparseNDArray, stype: str, ctx: Context, dtype) -> BaseSparseNDArray:
    """``x`` in storage ``stype`` on ``ctx``, with ``dtype`` (None: its own); ``x`` itself when nothing changes."""
    out = cast(x, stype)
    out = out if ctx == out.context else out.copyto(ctx)
    return out.astype(dtype) if dtype is not None and np.dtype(dtype) != out._data.dtype else out


def csr_matrix(arg1, shape=None, ctx: Context | None = None, dtype=None) -> CSRNDArray:
    """A CSRNDArray from ``(data, indices, indptr)``, ``(data, (row, col))``, a SciPy sparse matrix,
    a dense array (numpy or NDArray), another CSRNDArray, or a shape ``(M, N)`` (all zeros)."""
    ctx = ctx or current_context()
    if _shape_arg(arg1) and len(arg1) == 2 and shape is None:
        return zeros(CSR, arg1, ctx, dtype)
    if isinstance(arg1, BaseSparseNDArray):
        return _from_sparse(arg1, CSR, ctx, dtype)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _dtype(data, dtype)
        data, indices, indptr = _host(data, dt), _host(indices, np.int64), _host(indptr, np.int64)
        if shape is None:
            shape = (len(indptr) - 1, int(indices.max()) + 1 if indices.size else 0)
        # bounds and counts, not the order: MXNet's csr_matrix stores a row's columns as given (its
        # check_format() asks for sorted ones); unsorted columns are safe for every csr kernel here
        check_value(CSR, tuple(shape), data, indices, indptr, what="csr_matrix", sort_checked=False)
        value = st.csr_value(np, shape, data, indices, indptr)
        return new_sparse(CSR, shape, dt, ctx, _onto(value, ctx))
    if isinstance(arg1, tuple) and len(arg1) == 2:
        import scipy.sparse as sp

        data, (row, col) = arg1
        dt = _dtype(data, dtype)
        try:
            m = sp.coo_matrix((_host(data, dt), (_host(row, np.int64), _host(col, np.int64))), shape=shape)
        except ValueError as e:
            raise MXAsyncValueError(f"csr_matrix: (data, (row, col)) with shape {shape}: {e}") from e
        return csr_matrix(m, ctx=ctx, dtype=dt)
    if _is_scipy(arg1):
        dt = _dtype(arg1, dtype)
        m = arg1.tocsr()
        if m.ndim != 2:
            raise MXAsyncValueError(f"csr_matrix: a SciPy source must be 2-D, got shape {m.shape}")
        # scipy checks no index range itself: check before its native code reads them
        check_value(CSR, m.shape, np.asarray(m.data), np.asarray(m.indices, np.int64), np.asarray(m.indptr, np.int64),
                    what="csr_matrix (from a SciPy matrix)", sort_checked=False)
        value = st.from_scipy(np, m, dt)
        if shape is not None and tuple(shape) != value.shape:
            raise MXAsyncValueError(f"csr_matrix: shape {shape} does not match the matrix's {value.shape}")
        return new_sparse(CSR, value.shape, dt, ctx, _onto(value, ctx))
    dense = _host(arg1, _dtype(arg1, dtype))
    if dense.ndim != 2:
        raise MXAsyncValueError(f"csr_matrix: a dense source must be 2-D, got shape {dense.shape}")
    value = st.from_dense(np, dense, CSR)
    return new_sparse(CSR, dense.shape, dense.dtype, ctx, _onto(value, ctx))


def row_sparse_array(arg1, shape=None, ctx: Context | None = None, dtype=None) -> RowSparseNDArray:
    """A RowSparseNDArray from ``(data, indices)``, a dense array, another sparse array, or a shape."""
    ctx = ctx or current_context()
    if _shape_arg(arg1) and shape is None:
        return zeros(RSP, arg1, ctx, dtype)
    if isinstance(arg1, BaseSparseNDArray):
        return _from_sparse(arg1, RSP, ctx, dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        dt = _dtype(data, dtype)
        data, indices = _host(data, dt), _host(indices, np.int64).reshape(-1)
        if data.ndim == 1 and indices.size == data.shape[0] and shape is not None and len(shape) == 2 \
                and shape[1] == 1:
            data = data.reshape(-1, 1)
        if shape is None:
            shape = (int(indices.max()) + 1 if indices.size else 0, *data.shape[1:])
        shape = tuple(int(s) for s in shape)
        order = np.argsort(indices, kind="stable")
        if np.any(order != np.arange(order.size)):
            indices, data = indices[order], data[order]
        check_value(RSP, shape, data, indices, None, what="row_sparse_array")
        value = st.rsp_value(np, shape, np.ascontiguousarray(data), indices)
        return new_sparse(RSP, shape, dt, ctx, _onto(value, ctx))
    dense = _host(arg1, _dtype(arg1, dtype))
    value = st.from_dense(np, dense, RSP)
    return new_sparse(RSP, dense.shape, dense.dtype, ctx, _onto(value, ctx))


def zeros(stype: str, shape, ctx: Context | None = None, dtype=None, **kwargs) -> NDArray:
    """An all-zero array of storage type ``stype``."""
    stype = st.check_stype(stype, "zeros")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if stype == DEFAULT:
        from ._creation import zeros as dense_zeros

        return dense_zeros(shape, ctx, dtype)
    return new_sparse(stype, shape, dtype or np.float32, ctx or current_context())


def empty(stype: str, shape, ctx: Context | None = None, dtype=None) -> NDArray:
    """An empty array of storage type ``stype`` (a sparse one holds no element: all zeros)."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array, ctx: Context | None = None, dtype=None) -> NDArray:
    """A sparse array from a SciPy sparse matrix (csr) or a sparse NDArray (same storage type)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = source_array.copyto(ctx or source_array.context)
        return out.astype(dtype) if dtype is not None else out
    if _is_scipy(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise MXAsyncError(f"mx.nd.sparse.array: expected a sparse NDArray or a scipy.sparse matrix, got "
                       f"{type(source_array).__name__}")


def _ufunc(lhs, rhs, same: str, bcast: str, scalar: str, rscalar: str, out=None):
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        op = same if lhs.shape == rhs.shape else bcast
        return invoke(op, [lhs, rhs], out=out)
    if isinstance(lhs, NDArray):
        return invoke(scalar, [lhs], out=out, scalar=float(rhs))
    if isinstance(rhs, NDArray):
        return invoke(rscalar, [rhs], out=out, scalar=float(lhs))
    raise TypeError(f"expected an NDArray operand, got {type(lhs).__name__} and {type(rhs).__name__}")


def add(lhs, rhs, out=None):
    """``lhs + rhs``: elementwise_add for equal shapes (sparse result for sparse operands), else broadcast."""
    return _ufunc(lhs, rhs, "elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar", out)


def subtract(lhs, rhs, out=None):
    return _ufunc(lhs, rhs, "elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar", out)


def multiply(lhs, rhs, out=None):
    return _ufunc(lhs, rhs, "elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar", out)


def divide(lhs, rhs, out=None):
    return _ufunc(lhs, rhs, "elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar", out)


def retain(data, indices, out=None, name=None):
    """The rows ``indices`` of row_sparse ``data`` (``name`` is MXNet's, unused)."""
    return invoke("_sparse_retain", [data, indices], out=out)


def __getattr__(name: str):
    # the other ops: mx.nd.sparse.dot, .elemwise_add, .square, ... are mx.nd's (they dispatch on storage)
    from .. import ndarray as _nd
    from . import _internal

    fn = getattr(_internal, "_sparse_" + name, None) or getattr(_nd, name, None)
    if fn is None or name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = fn
    return fn
