"""Sparse NDArrays: ``CSRNDArray`` and ``RowSparseNDArray`` (MXNet 1.x's ``mx.nd.sparse``).

A sparse array is an NDArray whose memory is a :class:`~mxasync.operator.sparse.formats.SparseStore`
behind one engine var, so work on it is asynchronous and ordered like work on dense arrays;
the ops that write it replace the store's value when they run.

>>> import mxasync as mx
>>> a = mx.nd.sparse.csr_matrix(([1., 2.], [1, 0], [0, 1, 2]), shape=(2, 3))
>>> a.stype, a.indptr.asnumpy().tolist(), a.asnumpy().tolist()
('csr', [0, 1, 2], [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
>>> r = a.tostype('row_sparse'); r.indices.asnumpy().tolist()
[0, 1]
"""

from __future__ import annotations

import numpy as np

from ..backends import get_backend
from ..base import MXAsyncError
from ..operator.sparse import formats as st
from ..operator.sparse.formats import CSR, DEFAULT, RSP, SparseStore, SparseValue
from ..runtime.context import Context
from ._chunk import Chunk
from .ndarray import NDArray, _empty, _push, _xp

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "new_sparse", "cast", "is_sparse", "check_stype"]

check_stype = st.check_stype


def is_sparse(x) -> bool:
    return isinstance(x, NDArray) and x._data.__class__ is SparseStore


class BaseSparseNDArray(NDArray):
    """What both sparse storage types share; the memory (``_data``) is a ``SparseStore``."""

    __slots__ = ()

    @property
    def stype(self) -> str:
        return self._data.stype

    def _value(self) -> SparseValue:
        """The current content, after pending writes (a sync point)."""
        self.wait_to_read()
        return self._data.value

    def _to_host(self) -> np.ndarray:
        dense = st.to_dense(_xp(self._ctx), self._data.value)
        return np.array(dense) if isinstance(dense, np.ndarray) else dense.get()

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"\n<{kind} {'x'.join(map(str, self.shape))} @{self._ctx}>"

    def __reduce__(self):
        return (_rebuild_sparse, (self.stype, self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    def _aux(self, name: str) -> NDArray:
        v = self._value()
        arr = getattr(v, name)
        if name != "data":  # the caller may write the indices: the kernels' matrix (a narrowed copy) is rebuilt
            v.matrix = None
        return NDArray(Chunk(arr, self._ctx), arr)

    @property
    def data(self) -> NDArray:
        """The stored values (a dense NDArray)."""
        return self._aux("data")

    @property
    def indices(self) -> NDArray:
        """Column indices (csr) or row indices (row_sparse), int64."""
        return self._aux("indices")

    @property
    def _num_aux(self) -> int:
        return 2 if self.stype == CSR else 1

    @property
    def _aux_types(self) -> list:
        return [np.int64] * self._num_aux

    def _host_value(self) -> SparseValue:
        """The content with numpy arrays (a sync point)."""
        return map_arrays(self._value(), get_backend(self._ctx.device_type).to_numpy)

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` with this array's content (2-D arrays)."""
        v = self._value()
        if v.stype == RSP:
            v = st.cast_value(_xp(self._ctx), v, CSR)
        m = st.as_scipy(_xp(self._ctx), v)
        return m if isinstance(v.data, np.ndarray) else m.get()

    def tostype(self, stype: str) -> NDArray:
        return cast(self, st.check_stype(stype, "tostype"))

    def astype(self, dtype, copy: bool = True) -> NDArray:
        dtype = np.dtype(dtype)
        if not copy and dtype == self._data.dtype:
            return self
        out = new_sparse(self.stype, self.shape, dtype, self._ctx)
        src, dst = self._data, out._data

        def run(rctx):
            v = src.value
            dst.set(SparseValue(v.stype, v.shape, v.data.astype(dtype), v.indices, v.indptr))

        _push(run, self._ctx, [self._chunk.var], [out._chunk.var], "Cast", 0)
        return out

    def copy(self) -> NDArray:
        return self.copyto(self._ctx)

    def copyto(self, other) -> NDArray:
        """Copy into ``other`` (an NDArray of any storage type: cast) or onto a Context."""
        if isinstance(other, Context):
            dst = new_sparse(self.stype, self.shape, self.dtype, other)
        elif isinstance(other, NDArray):
            if other.shape != self.shape:
                raise MXAsyncError(f"copyto: shape {self.shape} into shape {other.shape}")
            if other._chunk is self._chunk:
                return other
            dst = other
        else:
            raise MXAsyncError(f"copyto: target must be an NDArray or a Context, got {type(other).__name__}")
        _store(self, dst, "_copyto")
        return dst

    def as_in_context(self, ctx: Context) -> NDArray:
        return self if ctx == self._ctx else self.copyto(ctx)

    def reshape(self, *shape, **kwargs):
        raise MXAsyncError(f"reshape is not supported for {type(self).__name__}")

    def __setitem__(self, key, value) -> None:
        """``x[:] = value``: the whole array, from an NDArray of any storage type, a numpy array or a
        scalar (as MXNet: a row_sparse array filled with a non-zero scalar stores every row, which is
        how ``init.Constant`` initialises a row_sparse weight; csr refuses non-zero scalars)."""
        if not (isinstance(key, slice) and key == slice(None)):
            raise MXAsyncError(f"{type(self).__name__}.__setitem__: only x[:] = value is supported, got key {key!r}")
        if isinstance(value, NDArray):
            if value.shape != self.shape:
                raise MXAsyncError(f"__setitem__: value of shape {value.shape} for an array of shape {self.shape}")
            if value._chunk is not self._chunk:
                _store(value, self, "_copyto")
            return
        if np.isscalar(value):
            if value != 0 and self.stype == "csr":
                raise MXAsyncError(f"CSRNDArray.__setitem__: assigning the non-zero scalar {value!r} is not "
                                   "supported (as in MXNet); use a dense array")
            value = np.full(self.shape, value, self._data.dtype)
        from ._creation import array

        _store(array(np.asarray(value), ctx=self._ctx, dtype=self.dtype), self, "_copyto")

    def check_format(self, full_check: bool = True) -> None:
        """Raise if the stored arrays do not form a valid array of this storage type (MXNet's checks)."""
        v = self._value()
        v_np = [np.asarray(a if isinstance(a, np.ndarray) else a.get()) if a is not None else None
                for a in (v.data, v.indices, v.indptr)]
        check_value(v.stype, v.shape, *v_np, full_check=full_check)

    # arithmetic: sparse results where MXNet gives them (mx.nd.sparse.add & co.)
    def __add__(self, o):
        return _arith("add", self, o)

    def __radd__(self, o):
        return _arith("add", o, self)

    def __sub__(self, o):
        return _arith("subtract", self, o)

    def __rsub__(self, o):
        return _arith("subtract", o, self)

    def __mul__(self, o):
        return _arith("multiply", self, o)

    def __rmul__(self, o):
        return _arith("multiply", o, self)

    def __truediv__(self, o):
        return _arith("divide", self, o)

    def __rtruediv__(self, o):
        return _arith("divide", o, self)

    def __neg__(self):
        from ._invoke import invoke

        return invoke("negative", [self])

    __hash__ = object.__hash__

    def __iadd__(self, o):
        return _arith("add", self, o, out=self)

    def __isub__(self, o):
        return _arith("subtract", self, o, out=self)

    def __imul__(self, o):
        return _arith("multiply", self, o, out=self)

    def __itruediv__(self, o):
        return _arith("divide", self, o, out=self)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row storage (``stype='csr'``)."""

    __slots__ = ()

    @property
    def indptr(self) -> NDArray:
        """Row pointers (rows + 1,), int64."""
        return self._aux("indptr")

    def __getitem__(self, key) -> NDArray:
        """Rows: ``x[i]`` or ``x[begin:end]`` (step 1), a new csr array."""
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, (int, np.integer)):
            if not -self.shape[0] <= key < self.shape[0]:
                raise IndexError(f"index {key} is out of bounds for a CSRNDArray of shape {self.shape}")
            key = int(key) % self.shape[0]
            key = slice(key, key + 1)
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise MXAsyncError(f"CSRNDArray.__getitem__: only an int or a slice with step 1, got {key!r}")
        begin, end, _ = key.indices(self.shape[0])
        from ._invoke import invoke

        return invoke("slice", [self], begin=(begin,), end=(max(begin, end),))


class RowSparseNDArray(BaseSparseNDArray):
    """An n-D array storing only some rows (``stype='row_sparse'``)."""

    __slots__ = ()

    def __getitem__(self, key) -> NDArray:
        if isinstance(key, slice) and key == slice(None):
            return self
        raise MXAsyncError(f"RowSparseNDArray.__getitem__: only x[:] is supported, got {key!r}")

    def retain(self, indices) -> RowSparseNDArray:
        from ._invoke import invoke

        return invoke("_sparse_retain", [self, indices])


_CLASSES = {CSR: CSRNDArray, RSP: RowSparseNDArray}


def check_value(stype, shape, data, indices, indptr, full_check: bool = True, what: str = "check_format",
                sort_checked: bool = True) -> None:
    """Validate the arrays of a csr / row_sparse value (numpy) by MXNet's ``check_format`` rules;
    raises MXNetError starting with ``what`` (the array: ``net.params: array 'arg:w'``).

    csr: 2-D, ``indptr`` of ``rows + 1`` entries starting at 0, never decreasing and ending at
    the number of stored values, which ``indices`` and ``data`` both hold; column indices in
    ``[0, cols)`` and strictly increasing within each row. row_sparse: one data row per index,
    the data rows of the array's row shape, indices in ``[0, rows)`` and strictly increasing.
    ``full_check=False`` checks the counts only (no pass over the indices); ``sort_checked=False``
    leaves out the order (a SciPy matrix, put in canonical order afterwards).
    """
    shape = tuple(int(d) for d in shape)
    if stype == CSR:
        if len(shape) != 2:
            raise MXAsyncError(f"{what}: a csr array is 2-D, got shape {shape}")
        if indptr is None or indptr.shape != (shape[0] + 1,):
            raise MXAsyncError(f"{what}: csr indptr must have shape ({shape[0] + 1},) for shape {shape}, got "
                               f"{None if indptr is None else indptr.shape}")
        if indices.ndim != 1 or data.ndim != 1 or indices.shape != data.shape:
            raise MXAsyncError(f"{what}: csr indices {indices.shape} and data {data.shape} must be 1-D of one length")
        if not full_check:
            return
        nnz = indices.shape[0]
        if int(indptr[0]) != 0 or int(indptr[-1]) != nnz:
            raise MXAsyncError(f"{what}: csr indptr must start at 0 and end at the {nnz} stored values, got "
                               f"{int(indptr[0])} ... {int(indptr[-1])}")
        step = np.diff(indptr)
        if np.any(step < 0):
            r = int(np.argmax(step < 0))
            raise MXAsyncError(f"{what}: csr indptr decreases at row {r} ({int(indptr[r])} then {int(indptr[r + 1])})")
        if nnz:
            bad = (indices < 0) | (indices >= shape[1])
            if bad.any():
                k = int(np.argmax(bad))
                raise MXAsyncError(f"{what}: csr column index {int(indices[k])} (stored value {k}, row "
                                   f"{_row_of(indptr, k)}) is out of range [0, {shape[1]})")
            if not sort_checked:
                return
            rising = np.diff(indices) > 0
            starts = indptr[1:-1]
            rising[starts[(starts > 0) & (starts < nnz)] - 1] = True  # a new row may start lower
            if not rising.all():
                k = int(np.argmax(~rising)) + 1
                raise MXAsyncError(f"{what}: csr column indices of row {_row_of(indptr, k)} are not sorted and "
                                   f"unique ({int(indices[k - 1])} then {int(indices[k])})")
        return
    if indices.ndim != 1 or data.ndim < 1 or indices.shape[0] != data.shape[0] \
            or tuple(data.shape[1:]) != tuple(shape[1:]):
        raise MXAsyncError(f"{what}: row_sparse data {data.shape} does not match indices {indices.shape} and "
                           f"shape {shape}")
    if full_check and indices.size:
        bad = (indices < 0) | (indices >= shape[0])
        if bad.any():
            k = int(np.argmax(bad))
            raise MXAsyncError(f"{what}: row_sparse row index {int(indices[k])} (position {k}) is out of range "
                               f"[0, {shape[0]})")
        rising = np.diff(indices) > 0
        if not rising.all():
            k = int(np.argmax(~rising)) + 1
            raise MXAsyncError(f"{what}: row_sparse indices are not sorted and unique ({int(indices[k - 1])} then "
                               f"{int(indices[k])} at position {k})")


def _row_of(indptr, k: int) -> int:
    return int(np.searchsorted(indptr, k, side="right")) - 1


def new_sparse(stype: str, shape, dtype, ctx: Context, value: SparseValue | None = None) -> BaseSparseNDArray:
    """A sparse array of ``stype`` (all zeros unless ``value`` is given)."""
    xp = _xp(ctx)
    dtype = np.dtype(dtype if dtype is not None else np.float32)
    if value is None:
        value = st.empty_value(xp, stype, shape, dtype)
    store = SparseStore(value, dtype)
    chunk = Chunk(store, ctx)
    return _CLASSES[stype](chunk, store)


def _store(src: NDArray, dst: NDArray, name: str) -> None:
    """Push ``dst = src`` with a storage cast (either may be dense or sparse)."""
    sdata, ddata = src._data, dst._data
    stype = dst.stype
    xp = _xp(dst._ctx)
    cross = src._ctx.device_type != dst._ctx.device_type
    src_backend, dst_backend = get_backend(src._ctx.device_type), get_backend(dst._ctx.device_type)

    def move(a):  # through host memory, as the backends' copies
        return dst_backend.asarray(src_backend.to_numpy(a), dst._ctx)

    def run(rctx):
        v = sdata.value if sdata.__class__ is SparseStore else sdata
        if cross:
            v = map_arrays(v, move)
        out = st.cast_value(xp, v, stype)
        if stype == DEFAULT:
            ddata[...] = out
        else:
            ddata.set(out)

    _push(run, dst._ctx, [src._chunk.var], [dst._chunk.var], name, 0)


def map_arrays(v, fn):
    """``fn`` applied to a dense array, or to each array of a :class:`SparseValue` (a missing one stays None):
    how a value moves between devices, through the backends' ``to_numpy`` and ``asarray``."""
    def conv(a):
        return None if a is None else fn(a)

    if isinstance(v, SparseValue):
        return SparseValue(v.stype, v.shape, conv(v.data), conv(v.indices), conv(v.indptr))
    return conv(v)


def cast(x: NDArray, stype: str) -> NDArray:
    """``x`` in storage type ``stype`` (a new array; ``x`` itself when it already has it)."""
    if x.stype == stype:
        return x
    out = _empty(x.shape, x.dtype, x._ctx) if stype == DEFAULT else new_sparse(stype, x.shape, x.dtype, x._ctx)
    _store(x, out, "cast_storage")
    return out


def _arith(name: str, a, b, out=None):
    from . import sparse

    return getattr(sparse, name)(a, b, out=out)


def _rebuild_sparse(stype, dense, device_type, device_id):
    from ._creation import array

    return cast(array(dense, ctx=Context(device_type, device_id), dtype=dense.dtype), stype)
