"""``mx.np.ndarray``: an array of the engine with NumPy's semantics.

It is an :class:`~mxasync.ndarray.NDArray` (asynchronous, awaitable, on any context,
recorded by autograd) whose operators, indexing and methods follow NumPy: 0-d results,
zero-size arrays, NumPy broadcasting and MXNet 1.9's type promotion.

>>> from mxasync import np
>>> a = np.array([[1, 2], [3, 4]])
>>> a[1, 0], a.sum(axis=0), (a > 2).dtype
(array(3.), array([4., 6.]), dtype('bool'))
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as _np

from ..base import MXAsyncError, MXAsyncTypeError, MXAsyncValueError
from ..ndarray import _recording
from ..ndarray._chunk import Chunk
from ..ndarray.ndarray import NDArray, _empty
from ..operator.numpy import dunders as _dunders
from ..operator.numpy.indexing import encode_key
from ..runtime.context import Context, current_context
from ..runtime.engine import Engine
from ._frontend import NDFrontend, _as_cls, _ctx, default_float

__all__ = ["ndarray", "array", "run_dynamic", "F"]

F = NDFrontend()


def _api():
    from . import _api_registry

    return _api_registry.ND


def _index_array(arr: _np.ndarray) -> _np.ndarray:
    """An index array as NumPy takes it: MXNet indexes with float arrays too (``np.array([1])`` is
    float32 there), truncating them to integers, for reads and writes alike."""
    return arr.astype(_np.int64) if arr.dtype.kind == "f" else arr


def _assign(target: _np.ndarray, key: tuple, value) -> None:
    """``target[key] = value``, where a value with more axes than the selection loses its leading
    1-size ones first, as MXNet's ``_prepare_value_nd`` does (NumPy 2 refuses ``x[i] = [[v]]``)."""
    try:
        target[key] = value
    except ValueError:
        shape, want = _np.shape(value), _np.ndim(target[key])
        lead = len(shape) - want
        if lead <= 0 or any(n != 1 for n in shape[:lead]):
            raise
        target[key] = _np.reshape(value, shape[lead:])


_ARRAY_SLOT = object()  # where a setitem key holds an index array (None there is NumPy's newaxis)


def _check_fits(shape: tuple, key: tuple, value_shape: tuple) -> None:
    """Raise now, not at the next read, when a value cannot fill ``x[key]`` (MXNet checks at the call):
    the selection's shape comes from indexing a zero-stride stand-in of ``x``; an out-of-range index
    raises NumPy's IndexError here too."""
    sel = _np.broadcast_to(_np.empty((), dtype=_np.bool_), shape)[key].shape
    lead = len(value_shape) - len(sel)
    if lead > 0 and all(n == 1 for n in value_shape[:lead]):  # as _assign: extra leading 1-size axes go
        value_shape = value_shape[lead:]
    try:
        fits = _np.broadcast_shapes(value_shape, sel) == sel
    except ValueError:
        fits = False
    if not fits:
        raise MXAsyncValueError(f"__setitem__: value of shape {tuple(value_shape)} cannot fill a selection of "
                                f"shape {sel} (array of shape {shape})")


class ndarray(NDArray):  # noqa: N801 - NumPy's name
    """An n-dimensional array of the engine with NumPy's semantics (``mx.np.ndarray``)."""

    __slots__ = ()

    # -- attributes --------------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._data.dtype

    @property
    def T(self) -> ndarray:
        return _api().transpose(self)

    @property
    def device(self) -> Context:
        return self._ctx

    @property
    def grad(self):
        e = self._ag
        if e is not None and e.node is None and e.req == 0:  # grad_req='null': no gradient (MXNet's np)
            return None
        g = super().grad
        return None if g is None else F.wrap(g) if type(g) is not ndarray else g

    def detach(self) -> ndarray:
        return ndarray(self._chunk, self._data)

    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        super().attach_grad(grad_req, stype)
        e = self._ag
        if e is not None and e.grad is not None and type(e.grad) is not ndarray:
            e.grad.__class__ = ndarray

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:  # raised by iter() itself, as NumPy's: np.iterable(x) is False (matplotlib asks)
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        if self.size != 1:
            if self.size == 0:
                return False
            raise ValueError("The truth value of an ndarray with more than one element is ambiguous.")
        return bool(self.item())

    def __index__(self) -> int:
        if self.ndim == 0 and self.dtype.kind in "iub":
            return int(self.item())
        raise TypeError("only integer scalar arrays can be converted to a scalar index")

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def item(self, *args):
        return self.asnumpy().item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        return self.item()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        text = repr(self.asnumpy())
        dt = self.dtype
        if "dtype=" in text:
            if dt == _np.float32:
                text = text[:text.rindex(",")] + ")"
        elif dt not in (_np.float32, _np.bool_):
            text = text[:-1] + f", dtype={dt})"
        if self._ctx.device_type != "cpu":
            text = text[:-1] + f", ctx={self._ctx})"
        return text

    def __str__(self) -> str:
        text = str(self.asnumpy())
        return text if self._ctx.device_type == "cpu" else f"{text} @{self._ctx}"

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
        return str(self)

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    def __hash__(self):
        return object.__hash__(self)

    # -- conversions ---------------------------------------------------------------------------------
    def as_nd_ndarray(self) -> NDArray:
        """The same array with MXNet's classic semantics (``mx.nd.NDArray``), sharing memory."""
        return _as_cls(self, NDArray)

    def as_np_ndarray(self) -> ndarray:
        return self

    def asnumpy(self) -> _np.ndarray:
        return super().asnumpy()

    def copy(self, order: str = "C") -> ndarray:
        if order != "C":
            raise NotImplementedError(f"ndarray.copy: order={order!r}: only 'C' is supported (as in MXNet)")
        return _api().copy(self)

    def copyto(self, other):
        res = super().copyto(other)
        return F.wrap(res) if isinstance(other, Context) else res

    def as_in_context(self, ctx: Context) -> ndarray:
        return self if ctx == self._ctx else self.copyto(ctx)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> ndarray:  # noqa: ARG002
        dt = _np.dtype(dtype if dtype is not None else default_float())
        if not copy and dt == self.dtype:
            return self
        return F.op("_npi_copy", [self], dtype=dt.name)

    def reshape(self, *shape, order: str = "C", **kwargs) -> ndarray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("newshape", kwargs.pop("shape", shape))
        if kwargs:
            raise TypeError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        return _api().reshape(self, shape, order=order)

    # -- indexing ------------------------------------------------------------------------------------
    def __getitem__(self, key) -> ndarray:
        if isinstance(key, (bool, _np.bool_)) or (isinstance(key, NDArray) and key.dtype == _np.bool_
                                                  and key.ndim == 0):
            # a 0-d mask: a new first axis, kept (True) or emptied (False), as NumPy
            expanded = self[None]
            return expanded if bool(key.item() if isinstance(key, NDArray) else key) else expanded[0:0]
        key, arrays = _split_key(key, self)
        if not arrays and not self._recorded():
            view = self._data[key + (Ellipsis,)] if Ellipsis not in key else self._data[key]
            if view.flags.c_contiguous:  # MXNet's rule: a basic index is a view only when contiguous
                return ndarray(self._chunk, view)
        return F.op("_npi_index", [self, *arrays], key=encode_key_arrays(key), num_args=1 + len(arrays))

    def __setitem__(self, key, value) -> None:
        if _recording.active and (self._ag is not None or getattr(value, "_ag", None) is not None):
            _recording.check_write(self, "__setitem__")
            _recording.check_inplace(value, "__setitem__")
        if not isinstance(key, tuple):
            key = (key,)
        arrays, datas = [], []
        plain: list = []
        for k in key:
            if isinstance(k, NDArray):
                arrays.append(k)
                plain.append(_ARRAY_SLOT)
            else:
                plain.append(_np.asarray(k) if isinstance(k, (list, range)) else k)  # a range: as its list
        if isinstance(value, NDArray):
            val_arr = value
        else:
            val_arr = None
            vnp = _np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
        if not arrays:  # with index arrays the selection is known once they are computed
            _check_fits(self.shape, tuple(plain), tuple(val_arr.shape) if val_arr is not None else vnp.shape)
        datas = [a._data for a in arrays]
        target = self._data

        def assign(rctx):
            it = iter(datas)
            k = tuple(_index_array(next(it)) if p is _ARRAY_SLOT else p for p in plain)
            _assign(target, k, val_arr._data if val_arr is not None else vnp)

        reads = [a._chunk.var for a in arrays] + ([val_arr._chunk.var] if val_arr is not None else [])
        reads = [v for v in dict.fromkeys(reads) if v is not self._chunk.var]
        Engine.get().push_sync(assign, self._ctx, reads, [self._chunk.var], name="_npi_setitem")

    # -- operators -----------------------------------------------------------------------------------
    def _bin(self, other, name, reverse=False):
        if not (isinstance(other, (NDArray, numbers.Number, _np.ndarray, _np.generic, list, tuple))):
            return NotImplemented
        fn = getattr(_api(), name)
        return fn(other, self) if reverse else fn(self, other)

    def __and__(self, o):
        return self._bin(o, "bitwise_and")

    def __or__(self, o):
        return self._bin(o, "bitwise_or")

    def __xor__(self, o):
        return self._bin(o, "bitwise_xor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self):
        return _api().invert(self)

    def __neg__(self):
        return _api().negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _api().absolute(self)

    def __eq__(self, o):
        if o is None:
            return False
        return self._bin(o, "equal")

    def __ne__(self, o):
        if o is None:
            return True
        return self._bin(o, "not_equal")

    def _iop(self, o, name):
        return getattr(_api(), name)(self, o, out=self)

    def __iadd__(self, o):
        return self._iop(o, "add")

    def __isub__(self, o):
        return self._iop(o, "subtract")

    def __imul__(self, o):
        return self._iop(o, "multiply")

    def __itruediv__(self, o):
        return self._iop(o, "true_divide")

    def __imod__(self, o):
        return self._iop(o, "mod")

    def __ifloordiv__(self, o):
        return self._iop(o, "floor_divide")

    # -- NumPy's protocols (MXNet 1.9: mx.np's function when there is one, else NumPy's on a copy) ---
    def __array_function__(self, func, types, args, kwargs):
        from . import _interop

        return _interop.array_function(func, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import _interop

        return _interop.array_ufunc(ufunc, method, inputs, kwargs)


# a + b, a // b, a < b, ... as the NumPy functions (the bitwise ops, == and != are written out in the class)
_dunders.install(ndarray, {**_dunders.ARITHMETIC, **_dunders.COMPARISONS}, _dunders.ARITHMETIC)


def _fluent(name, np_name=None):
    np_name = np_name or name

    def method(self, *args, **kwargs):
        return getattr(_api(), np_name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``mx.np.{np_name}(self, ...)``."
    return method


def _transpose_method(self, *axes):
    """``a.transpose(1, 0)`` and ``a.transpose((1, 0))``, as NumPy."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _api().transpose(self, axes if axes else None)


ndarray.transpose = _transpose_method


def _clip_method(self, min=None, max=None, out=None):  # noqa: A002 - MXNet's names
    """``a.clip(min, max)`` (MXNet's method takes ``min``/``max``; ``np.clip`` takes ``a_min``/``a_max``)."""
    return _api().clip(self, min, max, out=out)


ndarray.clip = _clip_method

for _m in ("sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all", "cumsum",
           "flatten", "squeeze", "repeat", "tile", "dot", "round", "swapaxes", "take",
           "nonzero", "sort", "argsort", "diagonal", "ravel", "flip", "trace", "split", "broadcast_to",
           "tolist_", "abs", "exp", "log", "sqrt", "square", "sign", "sin", "cos", "tanh", "sigmoid_"):
    if _m.endswith("_"):
        continue
    setattr(ndarray, _m, _fluent(_m))


def encode_key_arrays(key) -> tuple:
    return encode_key(tuple("A" if isinstance(k, _ArrayMark) else k for k in key))


class _ArrayMark:
    """Stands for an index array in a key (the arrays themselves go to the op as inputs)."""


_MARK = _ArrayMark()


def _split_key(key, data) -> tuple[tuple, list]:
    """NumPy's ``key`` as (a tuple of basic parts and marks, the index arrays as engine arrays).

    Boolean masks become the integer arrays of their ``nonzero`` (computed on the engine)."""
    if not isinstance(key, tuple):
        key = (key,)
    parts: list = []
    arrays: list = []
    axis = 0  # the data axis the next key item indexes (unknown after an Ellipsis)
    for k in key:
        if isinstance(k, (list, range, _np.ndarray)) or (hasattr(k, "__array__")
                                                         and not isinstance(k, (NDArray, _np.generic))):
            host = _np.asarray(k)
            k = array(host, dtype=host.dtype if host.dtype == _np.bool_ else "int64", ctx=data._ctx)
        if isinstance(k, (bool, _np.bool_)) or (isinstance(k, NDArray) and k.dtype == _np.bool_ and k.ndim == 0):
            parts.append(None)  # a 0-d mask: a new axis, kept (True) or emptied (False)
            if not bool(k.item() if isinstance(k, NDArray) else k):
                parts.append(_MARK)
                arrays.append(array(_np.zeros(0, _np.int64), dtype="int64", ctx=data._ctx))
            continue
        if isinstance(k, NDArray):
            if k.dtype == _np.bool_:
                if axis is not None and tuple(k.shape) != tuple(data.shape[axis:axis + k.ndim]):
                    raise IndexError(f"boolean index of shape {k.shape} does not match the indexed axes "
                                     f"{tuple(data.shape[axis:axis + k.ndim])} of an array of shape {data.shape}")
                nz = run_dynamic(lambda xp, m: tuple(xp.nonzero(m)), [k], "_npi_nonzero")
                parts.extend([_MARK] * len(nz))
                arrays.extend(nz)
                axis = None if axis is None else axis + k.ndim
            else:
                parts.append(_MARK)
                arrays.append(k)
                axis = None if axis is None else axis + 1
        elif isinstance(k, _np.integer):
            parts.append(int(k))
            axis = None if axis is None else axis + 1
        else:
            parts.append(k)
            if k is Ellipsis:
                axis = None
            elif k is not None and axis is not None:
                axis += 1
    return tuple(parts), arrays


def _split_key_symbolic(key) -> tuple[tuple, list]:
    """A key of a symbolic array: its basic parts with "A" where an index array (a graph input) goes."""
    if not isinstance(key, tuple):
        key = (key,)
    parts, arrays = [], []
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (int, _np.integer, slice)):
            parts.append(int(k) if isinstance(k, _np.integer) else k)
        else:
            parts.append("A")
            arrays.append(k)
    return tuple(parts), arrays


def run_dynamic(fn, inputs: list, name: str) -> Any:
    """Run ``fn(xp, *datas)`` on the engine after the inputs' writes and wait for it: for ops
    whose result's shape depends on values (``nonzero``, ``unique``, boolean masks).
    Returns the result arrays as ``mx.np.ndarray`` (a tuple when ``fn`` returns one)."""
    eng = Engine.get()
    ctx = inputs[0]._ctx if inputs else current_context()
    datas = [x._data for x in inputs]
    holder: dict = {}
    var = eng.new_variable(name)
    from ..backends import get_backend

    xp = get_backend(ctx.device_type).xp

    def kernel(rctx):
        holder["r"] = fn(xp, *datas)

    eng.push_sync(kernel, ctx, list(dict.fromkeys(x._chunk.var for x in inputs)), [var], name=name)
    eng.wait_for_var(var)
    res = holder["r"]

    def wrap(r):
        r = xp.ascontiguousarray(r)
        return ndarray(Chunk(r, ctx), r)

    return tuple(wrap(r) for r in res) if isinstance(res, tuple) else wrap(res)


def _rebuild(data, device_type, device_id):
    try:
        return array(data, dtype=data.dtype, ctx=Context(device_type, device_id))
    except MXAsyncError:
        return array(data, dtype=data.dtype)


_UNSUPPORTED_KINDS = {"c": "complex values", "O": "object arrays", "U": "strings", "S": "byte strings",
                      "V": "structured (void) arrays", "M": "datetimes", "m": "timedeltas"}


def array(object, dtype=None, ctx=None, copy=True) -> ndarray:  # noqa: A002 - NumPy's name
    """An ``mx.np.ndarray`` from an array-like. Python lists of numbers give ``float32`` (float64 under
    ``npx.set_np(dtype=True)``), booleans stay ``bool``, arrays keep their dtype."""
    ctx = _ctx(ctx)
    if isinstance(object, NDArray):
        dt = _np.dtype(dtype) if dtype is not None else object._data.dtype
        src = object.as_in_context(ctx) if object._ctx != ctx else object
        res = F.op("_npi_copy", [src], dtype=dt.name)
        return res
    has_dtype = hasattr(object, "dtype")
    host = _np.asarray(object.asnumpy() if hasattr(object, "asnumpy") else object)
    if dtype is None:
        if has_dtype:
            dt = host.dtype
        else:
            dt = _np.dtype(default_float())
    else:
        dt = _np.dtype(dtype)
    for kind in {host.dtype.kind, dt.kind} & set(_UNSUPPORTED_KINDS):  # NumPy would keep them: say so
        raise MXAsyncTypeError(f"mx.np.array: {_UNSUPPORTED_KINDS[kind]} "
                               f"({host.dtype if host.dtype.kind == kind else dt}) are not supported, as in MXNet; "
                               f"convert to a real numeric dtype first")
    host = _np.array(host, dtype=dt, copy=True)
    out = _empty(host.shape, dt, ctx)
    out.__class__ = ndarray
    dst = out._data

    def fill(rctx):
        dst[...] = host if isinstance(dst, _np.ndarray) else _xp(ctx).asarray(host)

    Engine.get().push_sync(fill, ctx, [], [out._chunk.var], name="_npi_array",
                           inline=host.size < 65536 and ctx.device_type == "cpu")
    return out


def _xp(ctx):
    from ..backends import get_backend

    return get_backend(ctx.device_type).xp


NDFrontend.ndarray_cls = ndarray
