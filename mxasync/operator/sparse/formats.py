"""Sparse storage formats (csr, row_sparse): their values, and the storage-type rules of ops
(MXNet's FInferStorageType / FComputeEx).

Two storage types besides dense ("default"), as in MXNet 1.x:

* ``csr``: a 2-D matrix as ``data`` (nnz,), column ``indices`` (nnz,) and row pointers
  ``indptr`` (rows + 1,);
* ``row_sparse``: an n-D array whose non-zero rows (first axis) are ``data`` (k, *shape[1:])
  at the sorted, unique row ``indices`` (k,).

A :class:`SparseValue` is one immutable content; a :class:`SparseStore` is the memory of a sparse
NDArray, whose value an engine op replaces when it writes the array (a sparse result's size is
known only when the op has run).  Kernels are written against the backend's array namespace
``xp`` and its sparse namespace (:func:`sparse_namespace`: ``scipy.sparse`` for numpy,
``cupyx.scipy.sparse`` for CuPy, imported on first use).

An op gains sparse kernels with :func:`register_sparse`, which installs, on the op's
:class:`~mxasync.operator.base.OperatorProperty` class, its ``infer_storage_type`` rule and its
``sparse_forward`` / ``sparse_backward`` kernels: the op's registry entry stays the one place
that says what the op is.

>>> import numpy as np
>>> v = from_dense(np, np.array([[0., 1.], [0., 0.], [2., 0.]]), "row_sparse")
>>> v.indices.tolist(), v.data.tolist()
([0, 2], [[0.0, 1.0], [2.0, 0.0]])
>>> to_dense(np, from_dense(np, np.eye(2), "csr")).tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

from ...base import MXAsyncError
from ..base import OperatorProperty

__all__ = ["DEFAULT", "CSR", "RSP", "STYPES", "SparseValue", "SparseStore", "sparse_namespace", "to_dense",
           "from_dense", "empty_value", "as_scipy", "from_scipy", "cast_value", "register_sparse",
           "rsp_value", "csr_value", "check_stype", "Fallback", "matrix_of"]

DEFAULT, CSR, RSP = "default", "csr", "row_sparse"
STYPES = (DEFAULT, RSP, CSR)
IDX = np.int64  # MXNet's index type for both storage types


def check_stype(stype, what: str = "stype") -> str:
    if stype is None:
        return DEFAULT
    if stype not in STYPES:
        raise ValueError(f"{what}: unknown storage type {stype!r}; valid: 'default', 'row_sparse', 'csr'")
    return stype


class SparseValue:
    """The content of a sparse array: ``stype``, ``shape``, ``data``, ``indices`` and (csr) ``indptr``."""

    __slots__ = ("stype", "shape", "data", "indices", "indptr", "matrix")

    def __init__(self, stype: str, shape: tuple, data, indices, indptr=None):
        self.stype = stype
        self.shape = tuple(int(s) for s in shape)
        self.data = data
        self.indices = indices
        self.indptr = indptr
        #: the (sp.)csr_matrix of a csr value, made by :func:`matrix_of` on first use (the value never changes)
        self.matrix = None

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    def __repr__(self) -> str:
        return f"<SparseValue {self.stype} {self.shape} nnz={self.nnz}>"


class SparseStore:
    """The memory of one sparse NDArray: fixed ``stype``/``shape``/``dtype``; ``value`` is replaced by
    the engine ops that write it (read it only on the engine, or after a wait)."""

    __slots__ = ("stype", "shape", "dtype", "value", "__weakref__")

    def __init__(self, value: SparseValue, dtype=None):
        self.stype = value.stype
        self.shape = value.shape
        self.dtype = np.dtype(dtype if dtype is not None else value.data.dtype)
        self.value = value

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def set(self, value: SparseValue) -> None:
        """Replace the content (an engine op writing this array); data keeps the array's dtype."""
        if value.stype != self.stype:
            raise TypeError(f"cannot store a {value.stype} value in a {self.stype} array")
        if value.data.dtype != self.dtype:
            value = SparseValue(value.stype, value.shape, value.data.astype(self.dtype), value.indices, value.indptr)
        self.value = value

    def __repr__(self) -> str:
        return f"<SparseStore {self.stype} {self.shape} {self.dtype}>"


_NAMESPACES: dict = {}

#: the sparse-matrix library of each array library, by the namespace's module name (a namespace
#: named otherwise, a plugin's wrapper of numpy say, is taken to hold numpy-compatible arrays)
_SPARSE_MODULES = {"numpy": "scipy.sparse", "cupy": "cupyx.scipy.sparse"}


def sparse_namespace(xp):
    """The sparse-matrix module matching array namespace ``xp`` (``scipy.sparse`` for numpy,
    ``cupyx.scipy.sparse`` for CuPy), imported the first time it is needed."""
    ns = _NAMESPACES.get(xp)
    if ns is None:
        name = _SPARSE_MODULES.get(getattr(xp, "__name__", ""), "scipy.sparse")
        try:
            ns = importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"sparse storage on {getattr(xp, '__name__', xp)!s} needs {name}: {e}") from None
        _NAMESPACES[xp] = ns
    return ns


# -- values ----------------------------------------------------------------------------------
def csr_value(xp, shape, data, indices, indptr) -> SparseValue:
    return SparseValue(CSR, shape, data, xp.asarray(indices, dtype=IDX), xp.asarray(indptr, dtype=IDX))


def rsp_value(xp, shape, data, indices) -> SparseValue:
    return SparseValue(RSP, shape, data, xp.asarray(indices, dtype=IDX))


def empty_value(xp, stype: str, shape: tuple, dtype) -> SparseValue:
    """All zeros: no stored element."""
    shape = tuple(int(s) for s in shape)
    if stype == CSR:
        if len(shape) != 2:
            raise ValueError(f"csr storage is 2-D only, got shape {shape}")
        return SparseValue(CSR, shape, xp.zeros((0,), dtype), xp.zeros((0,), IDX), xp.zeros((shape[0] + 1,), IDX))
    if stype == RSP:
        return SparseValue(RSP, shape, xp.zeros((0, *shape[1:]), dtype), xp.zeros((0,), IDX))
    raise ValueError(f"empty_value: not a sparse storage type: {stype!r}")


def to_dense(xp, v: SparseValue, out=None):
    """The dense array of ``v`` (into ``out`` when given); one too big to allocate raises MXNetError."""
    if out is None:
        try:
            out = xp.zeros(v.shape, v.data.dtype)
        except (MemoryError, ValueError) as e:
            raise MXAsyncError(f"cannot allocate the dense form of a {v.stype} array of shape {tuple(v.shape)} and "
                               f"dtype {np.dtype(v.data.dtype).name} ({type(e).__name__}: {e})") from e
    else:
        out[...] = 0
    if v.stype == RSP:
        if v.indices.shape[0]:
            out[v.indices] = v.data
        return out
    rows = xp.repeat(xp.arange(v.shape[0]), xp.diff(v.indptr).astype(IDX))
    if rows.shape[0]:
        xp.add.at(out, (rows, v.indices), v.data)  # duplicate entries of a non-canonical csr add up
    return out


def from_dense(xp, arr, stype: str) -> SparseValue:
    """The ``stype`` value holding the non-zeros of dense ``arr``."""
    if stype == RSP:
        if arr.ndim == 0:
            raise ValueError("row_sparse storage needs at least one axis")
        flat = arr.reshape(arr.shape[0], -1)
        keep = xp.nonzero(xp.any(flat != 0, axis=1))[0].astype(IDX)
        return SparseValue(RSP, arr.shape, xp.ascontiguousarray(arr[keep]), keep)
    if stype == CSR:
        if arr.ndim != 2:
            raise ValueError(f"csr storage is 2-D only, got shape {tuple(arr.shape)}")
        rows, cols = xp.nonzero(arr)
        counts = xp.bincount(rows, minlength=arr.shape[0]) if rows.shape[0] else xp.zeros(arr.shape[0], IDX)
        indptr = xp.concatenate([xp.zeros(1, IDX), xp.cumsum(counts).astype(IDX)])
        return SparseValue(CSR, arr.shape, xp.ascontiguousarray(arr[rows, cols]), cols.astype(IDX), indptr)
    raise ValueError(f"from_dense: not a sparse storage type: {stype!r}")


def as_scipy(xp, v: SparseValue):
    """A (sp.)csr_matrix sharing ``v``'s arrays (csr), or of the rows of a 2-D row_sparse value."""
    sp = sparse_namespace(xp)
    if v.stype == CSR:
        return sp.csr_matrix((v.data, v.indices, v.indptr), shape=v.shape)
    if len(v.shape) != 2:
        raise ValueError(f"as_scipy: a {len(v.shape)}-D row_sparse array has no matrix form")
    k, n = v.data.shape
    indptr = xp.full(v.shape[0] + 1, 0, dtype=IDX)
    if k:
        counts = xp.zeros(v.shape[0], IDX)
        counts[v.indices] = n
        indptr[1:] = xp.cumsum(counts)
    cols = xp.tile(xp.arange(n, dtype=IDX), k)
    return sp.csr_matrix((v.data.reshape(-1), cols, indptr), shape=v.shape)


def matrix_of(xp, v: SparseValue):
    """``as_scipy(xp, v)`` kept on a csr value for the kernels' products: SciPy checks and narrows the
    int64 index arrays each time it builds a matrix (a pass over them and a copy), so it does once.
    Never hand it to a user (it shares the value's arrays); :func:`as_scipy` makes a new one."""
    if v.stype != CSR:
        return as_scipy(xp, v)
    m = v.matrix
    if m is None:
        m = v.matrix = as_scipy(xp, v)
    return m


def from_scipy(xp, m, dtype=None) -> SparseValue:
    """A csr value from any scipy (or cupyx) sparse matrix (duplicates summed, indices sorted)."""
    m = m.tocsr()
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    data = m.data if dtype is None else m.data.astype(dtype, copy=False)
    return csr_value(xp, m.shape, data, m.indices, m.indptr)


def cast_value(xp, x, stype: str):
    """``x`` (a dense array or a SparseValue) in storage type ``stype``."""
    src = x.stype if isinstance(x, SparseValue) else DEFAULT
    if src == stype:
        return x
    if stype == DEFAULT:
        return to_dense(xp, x)
    if src == DEFAULT:
        return from_dense(xp, x, stype)
    if src == RSP and stype == CSR:
        if len(x.shape) != 2:
            raise ValueError(f"cast_storage: a row_sparse array of shape {x.shape} has no csr form")
        m = as_scipy(xp, x).copy()  # the matrix shares x's data: eliminate_zeros works in place
        m.eliminate_zeros()
        return from_scipy(xp, m)
    # csr -> row_sparse: the rows holding stored elements
    counts = xp.diff(x.indptr)
    rows = xp.nonzero(counts)[0].astype(IDX)
    dense_rows = as_scipy(xp, x)[rows].toarray() if rows.shape[0] else xp.zeros((0, x.shape[1]), x.dtype)
    return SparseValue(RSP, x.shape, xp.asarray(dense_rows, dtype=x.dtype), rows)


# -- storage-type rules on the op registry ---------------------------------------------------------
class Fallback:
    """An ``infer`` answer: no sparse kernel here, but the (dense-computed) outputs get these storage types."""

    __slots__ = ("out_stypes",)

    def __init__(self, out_stypes):
        self.out_stypes = list(out_stypes)


def register_sparse(op_name: str, *, infer: Callable, forward: Callable | None = None,
                    backward: Callable | None = None, backward_infer: Callable | None = None,
                    from_dense: bool = False) -> None:
    """Give op ``op_name`` its storage-type rule and sparse kernels.

    ``infer(prop, in_stypes) -> out_stypes``, ``None`` or :class:`Fallback`: None (dense outputs) or
    ``Fallback(out_stypes)`` when the op has no kernel for these inputs (the caller makes them
    dense, runs the dense kernel and casts the outputs: MXNet's storage fallback).
    ``forward(xp, prop, op_ctx, inputs, out_stypes) -> outputs``: inputs and outputs are dense
    arrays or :class:`SparseValue`s.  ``backward(xp, prop, op_ctx, out_grads, inputs, outputs,
    grad_stypes) -> input gradients`` (None: zero), asked for ``grad_stypes`` (None: not needed);
    ``backward_infer(prop, in_stypes, og_stypes) -> grad_stypes`` or None (dense backward).
    ``from_dense``: dense inputs may give sparse outputs (``cast_storage``, ``dot(forward_stype=)``),
    so imperative calls ask the rule even when no input is sparse.
    """
    from ..registry import when_registered

    def infer_storage_type(self, in_stypes):
        outs = infer(self, list(in_stypes))
        n_aux = len(self.list_auxiliary_states())
        if outs is None:
            return OperatorProperty.infer_storage_type(self, in_stypes)
        if isinstance(outs, Fallback):
            return [DEFAULT] * len(in_stypes), list(outs.out_stypes), [DEFAULT] * n_aux
        return list(in_stypes), list(outs), [DEFAULT] * n_aux

    def attach(opdef) -> None:  # when the op registers: the rule never loads an op family itself
        cls = opdef.prop_cls
        cls.infer_storage_type = infer_storage_type
        cls.sparse_forward = staticmethod(forward) if forward is not None else None
        cls.sparse_backward = staticmethod(backward) if backward is not None else None
        cls.sparse_backward_infer = staticmethod(backward_infer) if backward_infer is not None else None
        cls.sparse_from_dense = from_dense

    when_registered(op_name, attach)
