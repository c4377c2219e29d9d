"""NDArray: an asynchronous array on the engine, with MXNet 1.x names.

Work on an NDArray is pushed to the engine and returns at once; only the sync
points block (``asnumpy``, ``asscalar``, ``wait_to_read``, ``wait_to_write``,
``repr``, ``mx.nd.waitall``), and each has an awaitable twin.

>>> import mxasync as mx
>>> a = mx.nd.array([[1, 2], [3, 4]])
>>> b = a[1]            # a view: shares a's memory and a's engine var
>>> b[:] = 7
>>> a.asnumpy().tolist()
[[1.0, 2.0], [7.0, 7.0]]
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .. import _seams
from .._bfloat16 import canonical_dtype
from ..backends import get_backend
from ..base import MXAsyncError, MXAsyncValueError
from ..operator.sparse.formats import cast_value
from ..operator.tensor.shape import reshape_shape
from ..runtime.context import Context
from ..runtime.engine import Engine
from ..runtime.run_context import FnProperty
from . import _recording
from ._chunk import Chunk, alloc_chunk
from ._dtype_maps import _DTYPE_MX_TO_NP, _DTYPE_NP_TO_MX, _GRAD_REQ_MAP  # noqa: F401 - MXNet has them here
from ._serialization import STORAGE_TYPES

py_slice = slice  # MXNet's module-level name for the builtin (its functions shadow ``slice``)

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "zeros_like", "ones_like",
           "waitall", "waitall_async"]

_engine = Engine.get
_DEFAULT_DTYPE = np.dtype(np.float32)

# MXNet's storage-type ids (what files and the __storage_type__ attribute hold), by name and back:
# module-level names of mxnet.ndarray.ndarray that MXNet's tests and libraries import
_STORAGE_TYPE_ID_TO_STR: dict[int, str] = dict(STORAGE_TYPES)
_STORAGE_TYPE_STR_TO_ID: dict[str, int] = {v: k for k, v in STORAGE_TYPES.items()}
_STORAGE_TYPE_UNDEFINED = _STORAGE_TYPE_STR_TO_ID["undefined"]
_STORAGE_TYPE_DEFAULT = _STORAGE_TYPE_STR_TO_ID["default"]
_STORAGE_TYPE_ROW_SPARSE = _STORAGE_TYPE_STR_TO_ID["row_sparse"]
_STORAGE_TYPE_CSR = _STORAGE_TYPE_STR_TO_ID["csr"]


def _xp(ctx: Context):
    return get_backend(ctx.device_type).xp


def _push(fn, ctx, reads, writes, name, size, prop=FnProperty.NORMAL):
    _engine().push_sync(fn, ctx, reads, writes, prop=prop, name=name,
                        inline=size < INLINE_ELEMENTS and ctx.device_type == "cpu")


def _assign(dst, src, rctx) -> None:
    dst[...] = src


def _assign_to_sparse(xp, dst, src, rctx) -> None:
    """A dense value into a sparse array's store: a storage cast (MXNet's copyto into row_sparse/csr)."""
    dst.set(cast_value(xp, src, dst.stype))


def _cross_device_copy(src_ctx: Context, dst_ctx: Context):
    """``(copy(dst, src, rctx), prop, run ctx)`` between two device types, through their backends' copy hooks.

    Host-memory devices (cpu, cpu_pinned, cpu_shared, a plugin's with ``host_memory``) copy by
    assignment; a device holding its own memory copies through ``copy_from_host`` /
    ``copy_to_host`` on its copy lane (MXNet's COPY_TO_GPU / COPY_FROM_GPU properties).
    """
    from ..backends import get_backend

    src_b, dst_b = get_backend(src_ctx.device_type), get_backend(dst_ctx.device_type)
    if src_b.host_memory and dst_b.host_memory:
        return _assign, FnProperty.NORMAL, src_ctx
    if src_b.host_memory:
        return (lambda dst, src, rctx: dst_b.copy_from_host(dst, src, rctx)), FnProperty.COPY_TO_GPU, dst_ctx
    if dst_b.host_memory:
        return (lambda dst, src, rctx: src_b.copy_to_host(src, dst, rctx)), FnProperty.COPY_FROM_GPU, src_ctx

    def through_host(dst, src, rctx):  # device to another device type: by way of a host array
        dst_b.copy_from_host(dst, src_b.to_numpy(src), rctx)

    return through_host, FnProperty.COPY_FROM_GPU, src_ctx


class NDArray:
    """An n-dimensional array whose operations run on the engine."""

    __slots__ = ("_chunk", "_data", "_ctx", "_ag", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, chunk: Chunk, data):
        self._chunk = chunk
        self._data = data
        self._ctx = chunk.ctx
        self._ag = None  # the recorder's entry once attach_grad()ed or recorded (see _recording.py)

    # -- attributes --------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype.type

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def stype(self) -> str:
        return "default"

    @property
    def T(self) -> NDArray:
        if self.ndim != 2:
            raise MXAsyncError(f"NDArray.T: only 2-D arrays, got shape {self.shape}")
        return invoke("transpose", [self])

    @property
    def handle(self):
        return self._chunk.var

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    # -- autograd (mxasync/autograd) ---------------------------------------
    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Allocate a zero gradient buffer (``.grad``) and make this array an autograd variable."""
        _recording.recorder().attach_grad(self, grad_req, stype)

    @property
    def grad(self):
        """The gradient buffer of an ``attach_grad()``ed array; None otherwise."""
        e = self._ag
        return e.grad if e is not None and e.node is None else None

    def backward(self, out_grad=None, retain_graph: bool = False, train_mode: bool = True) -> None:  # noqa: FBT001, FBT002
        """``mx.autograd.backward([self], [out_grad])``: fill the variables' ``.grad``."""
        _recording.recorder().backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    @property
    def _fresh_grad(self) -> bool:
        """Whether a backward wrote this variable's gradient since the flag was last cleared (MXNet's)."""
        e = self._ag
        return bool(e is not None and e.node is None and e.fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, value: bool) -> None:
        e = self._ag
        if e is None or e.node is not None:
            raise MXAsyncError("_fresh_grad: the array is not an autograd variable (call attach_grad())")
        e.fresh = bool(value)

    def detach(self) -> NDArray:
        """The same memory, cut from the recorded graph."""
        return type(self)(self._chunk, self._data)

    def as_np_ndarray(self):
        """The same array (memory, autograd entry) with NumPy's semantics: an ``mx.np.ndarray`` (the
        NumPy interface sits above this layer: its class comes through the numpy seam)."""
        cls = _seams.numpy.get().ndarray
        out = cls.__new__(cls)
        out._chunk, out._data, out._ctx, out._ag = self._chunk, self._data, self._ctx, self._ag
        return out

    def as_nd_ndarray(self) -> NDArray:
        return self

    def _recorded(self) -> bool:
        return self._ag is not None and _recording.active and _recording._tls.recording

    # -- sync points ------------------------------------------------------
    def wait_to_read(self) -> None:
        """Block until every pending write to this array finished; raise its error, once."""
        _engine().wait_for_var(self._chunk.var, for_write=False)  # the writes only (engine.wait_to_read)

    def wait_to_write(self) -> None:
        """Block until every pending read and write of this array finished."""
        _engine().wait_for_var(self._chunk.var)

    async def wait_to_read_async(self) -> None:
        await _engine().wait_for_var_async(self._chunk.var, for_write=False)

    async def wait_to_write_async(self) -> None:
        await _engine().wait_for_var_async(self._chunk.var)

    def __await__(self):
        async def ready():
            await self.wait_to_read_async()
            return self

        return ready().__await__()

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the contents (a sync point)."""
        self.wait_to_read()
        return self._to_host()

    async def asnumpy_async(self) -> np.ndarray:
        await self.wait_to_read_async()
        return self._to_host()

    def _to_host(self) -> np.ndarray:
        data = self._data
        if isinstance(data, np.ndarray):
            return np.array(data)
        from ..backends import get_backend

        return get_backend(self._ctx.device_type).to_numpy(data)

    def asscalar(self):
        if self.size != 1:
            raise MXAsyncError(f"asscalar: the array must have exactly one element, got shape {self.shape}")
        return self.asnumpy().reshape(-1)[0]

    async def asscalar_async(self):
        return (await self.asnumpy_async()).reshape(-1)[0]

    def __repr__(self) -> str:
        return f"\n{self.asnumpy()!s}\n<NDArray {'x'.join(map(str, self.shape))} @{self._ctx}>"  # as MXNet: str of the values

    def __bool__(self) -> bool:
        if self.size == 0:
            return False  # MXNet: an empty array is false
        if self.size != 1:
            raise MXAsyncValueError("The truth value of an NDArray with multiple elements is ambiguous.")
        return bool(self.asscalar())

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    # -- views and copies ---------------------------------------------------
    def reshape(self, *shape, **kwargs) -> NDArray:
        """A view with a new shape; MXNet's codes 0, -1, -2, -3, -4 and ``reverse=True`` are accepted."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("shape", shape)
        reverse = bool(kwargs.pop("reverse", False))
        if kwargs:
            raise TypeError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        try:
            target = list(reshape_shape(self.shape, tuple(int(s) for s in shape), reverse, "reshape"))
        except MXAsyncError as e:  # MXNet's NDArray.reshape raises ValueError (ours is also an MXNetError)
            raise MXAsyncValueError(str(e)) from None
        if self._recorded():
            return _recorded.reshape(self, target)
        try:
            view = self._data.reshape(tuple(target))
        except ValueError:
            raise MXAsyncError(f"reshape: cannot reshape array of shape {self.shape} into {tuple(shape)}") from None
        if not _shares(view, self._data):
            raise MXAsyncError(f"reshape: shape {tuple(shape)} needs a copy of a non-contiguous view")
        return NDArray(self._chunk, view)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape) -> bool:
        """Whether ``x[slc_key]`` of a C-contiguous array of ``shape`` is contiguous (MXNet's helper);
        asked of numpy on a zero-stride-free view that touches no memory."""
        probe = np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), shape=tuple(shape),
                                                strides=_c_strides(tuple(shape)))
        return bool(probe[slc_key].flags.c_contiguous)

    def __getitem__(self, key) -> NDArray:
        key = _index_key(key)
        if self._recorded():
            return _recorded.getitem(self, key)
        if _is_basic(key):
            return NDArray(self._chunk, _basic_view(self._data, key))
        # advanced indexing copies, ordered after pending writes
        src = self
        index = key
        result_shape = np.broadcast_to(np.empty((), dtype=np.bool_), self.shape)[index].shape  # no allocation
        out = _empty(result_shape, self.dtype, self._ctx)
        out_data = out._data

        def gather(rctx):
            out_data[...] = src._data[index]

        _push(gather, self._ctx, [self._chunk.var], [out._chunk.var], "advanced_index", out.size)
        return out

    def __setitem__(self, key, value) -> None:
        if _recording.active and (self._ag is not None or getattr(value, "_ag", None) is not None):
            _recording.check_write(self, "__setitem__")
            _recording.check_inplace(value, "__setitem__")
        key = _index_key(key)
        target = self if key is None else (self[key] if _is_basic(key) else None)
        if target is None:
            self._scatter(key, value)
            return
        tdata = target._data
        if isinstance(value, NDArray) and value.stype != "default":
            value = value.tostype("default")  # a sparse value fills a dense target densely
        if isinstance(value, NDArray):
            if value._ctx.device_type != self._ctx.device_type:
                # another device's memory (a GPU array into a CPU slice): copy it over first, as an engine
                # op of its own; a kernel never reads across devices (CuPy refuses implicit conversions)
                value = value.as_in_context(self._ctx)
            vdata = value._data
            if value.shape != target.shape and not _fills(value.shape, target.shape):
                raise MXAsyncValueError(f"__setitem__: value of shape {value.shape} cannot fill a slice of shape "
                                   f"{target.shape}")

            vshape = _drop_leading_ones(value.shape, target.ndim)

            def copy(rctx):
                tdata[...] = vdata.reshape(vshape)

            _push(copy, self._ctx, [value._chunk.var], [self._chunk.var], "_copyto", target.size)
            return
        arr = np.asarray(value, dtype=tdata.dtype)
        if not _fills(arr.shape, tdata.shape):
            raise MXAsyncValueError(f"__setitem__: value of shape {arr.shape} cannot fill a slice of shape "
                               f"{tdata.shape}")
        arr = arr.reshape(_drop_leading_ones(arr.shape, tdata.ndim))

        def fill(rctx):
            tdata[...] = arr if isinstance(tdata, np.ndarray) else _xp(self._ctx).asarray(arr)

        _push(fill, self._ctx, [], [self._chunk.var], "_set_value", target.size)

    def _scatter(self, key, value) -> None:
        if self._ag is not None and _recording.active:
            _recording.check_write(self, "__setitem__")
        data = self._data
        val = value._data if isinstance(value, NDArray) else np.asarray(value, dtype=data.dtype)
        reads = [value._chunk.var] if isinstance(value, NDArray) else []

        def scatter(rctx):
            data[key] = val

        _push(scatter, self._ctx, reads, [self._chunk.var], "_scatter_set", self.size)

    def copy(self) -> NDArray:
        return self.copyto(self._ctx)

    def copyto(self, other) -> NDArray:
        """Copy into ``other`` (an NDArray) or into a new array on ``other`` (a Context)."""
        if isinstance(other, Context):
            if other == self._ctx and self._recorded():
                return _recorded.copy(self)
            dst = _empty(self.shape, self.dtype, other)
        elif isinstance(other, NDArray):
            if other.shape != self.shape:
                raise MXAsyncError(f"copyto: shape {self.shape} into shape {other.shape}")
            if other._chunk is self._chunk and other._data is self._data:
                return other
            if other._ag is not None and _recording.active:
                _recording.check_write(other, "copyto")
            dst = other
        else:
            raise MXAsyncError(f"copyto: target must be an NDArray or a Context, got {type(other).__name__}")
        src_data, dst_data = self._data, dst._data
        src_dev, dst_dev = self._ctx.device_type, dst._ctx.device_type
        prop, run_ctx, copy = FnProperty.NORMAL, dst._ctx if dst_dev == "gpu" else self._ctx, _assign
        if src_dev != dst_dev:
            copy, prop, run_ctx = _cross_device_copy(self._ctx, dst._ctx)
        if dst.stype != "default":
            if src_dev != dst_dev:
                raise MXAsyncError(f"copyto: a dense array on {self._ctx} into a {dst.stype} array on {dst._ctx}: "
                                   "copy it to that device first")
            copy = partial(_assign_to_sparse, _xp(dst._ctx))
        _push(partial(copy, dst_data, src_data), run_ctx, [self._chunk.var], [dst._chunk.var], "_copyto",
              self.size, prop)
        return dst

    def as_in_context(self, ctx: Context) -> NDArray:
        return self if ctx == self._ctx else self.copyto(ctx)

    def astype(self, dtype, copy: bool = True) -> NDArray:
        dtype = canonical_dtype(dtype)
        if not copy and dtype == self._data.dtype:
            return self
        if self._recorded():
            return _recorded.astype(self, dtype)
        out = _empty(self.shape, dtype, self._ctx)
        src, dst = self._data, out._data

        def cast(rctx):
            dst[...] = src

        _push(cast, self._ctx, [self._chunk.var], [out._chunk.var], "Cast", self.size)
        return out

    def tostype(self, stype: str) -> NDArray:
        """This array in storage type ``stype`` ('default', 'row_sparse' or 'csr'): MXNet's cast_storage."""
        from ._sparse_array import cast, check_stype

        return cast(self, check_stype(stype, "tostype"))

    # -- arithmetic -----------------------------------------------------------
    def _binary(self, other, op, scalar_op, reverse=False):
        if isinstance(other, NDArray):
            lhs, rhs = (other, self) if reverse else (self, other)
            return invoke_binary(op, lhs, rhs)
        if isinstance(other, (int, float, np.number, bool)):
            return invoke_scalar(scalar_op, self, float(other))
        return NotImplemented

    def __add__(self, o):
        return self._binary(o, "broadcast_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, o):
        return self._binary(o, "broadcast_sub", "_minus_scalar")

    def __rsub__(self, o):
        return self._binary(o, "broadcast_sub", "_rminus_scalar", reverse=True)

    def __mul__(self, o):
        return self._binary(o, "broadcast_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._binary(o, "broadcast_div", "_div_scalar")

    def __rtruediv__(self, o):
        return self._binary(o, "broadcast_div", "_rdiv_scalar", reverse=True)

    def __mod__(self, o):
        return self._binary(o, "broadcast_mod", "_mod_scalar")

    def __rmod__(self, o):
        return self._binary(o, "broadcast_mod", "_rmod_scalar", reverse=True)

    def __pow__(self, o):
        return self._binary(o, "broadcast_power", "_power_scalar")

    def __rpow__(self, o):
        return self._binary(o, "broadcast_power", "_rpower_scalar", reverse=True)

    def __neg__(self):
        return invoke("negative", [self])

    def __abs__(self):
        return invoke("abs", [self])

    def __eq__(self, o):
        return self._binary(o, "broadcast_equal", "_equal_scalar")

    def __ne__(self, o):
        return self._binary(o, "broadcast_not_equal", "_not_equal_scalar")

    def __gt__(self, o):
        return self._binary(o, "broadcast_greater", "_greater_scalar")

    def __ge__(self, o):
        return self._binary(o, "broadcast_greater_equal", "_greater_equal_scalar")

    def __lt__(self, o):
        return self._binary(o, "broadcast_lesser", "_lesser_scalar")

    def __le__(self, o):
        return self._binary(o, "broadcast_lesser_equal", "_lesser_equal_scalar")

    __hash__ = object.__hash__

    def _inplace(self, other, op, scalar_op):
        if isinstance(other, NDArray):
            if other._ag is not None and _recording.active:
                _recording.check_inplace(other, op)
            return invoke(op, [self, other], out=self)
        return invoke(scalar_op, [self], out=self, scalar=float(other))

    def __iadd__(self, o):
        return self._inplace(o, "broadcast_add", "_plus_scalar")

    def __isub__(self, o):
        return self._inplace(o, "broadcast_sub", "_minus_scalar")

    def __imul__(self, o):
        return self._inplace(o, "broadcast_mul", "_mul_scalar")

    def __itruediv__(self, o):
        return self._inplace(o, "broadcast_div", "_div_scalar")

    def __imod__(self, o):
        return self._inplace(o, "broadcast_mod", "_mod_scalar")

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))


def _fills(value_shape: tuple, target_shape: tuple) -> bool:
    """Does a value of ``value_shape`` broadcast to exactly ``target_shape``? Extra leading axes of
    size 1 are allowed (MXNet drops them)."""
    value_shape = _drop_leading_ones(value_shape, len(target_shape))
    try:
        return np.broadcast_shapes(value_shape, target_shape) == tuple(target_shape)
    except ValueError:
        return False


def _index_key(key):
    """NDArray indices (alone or inside a tuple) as numpy integer arrays, as MXNet takes them."""
    if isinstance(key, NDArray):
        return key.asnumpy().astype(np.int64)
    if isinstance(key, tuple) and any(isinstance(k, NDArray) for k in key):
        return tuple(k.asnumpy().astype(np.int64) if isinstance(k, NDArray) else k for k in key)
    return key


def _c_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _drop_leading_ones(shape: tuple, ndim: int) -> tuple:
    shape = tuple(shape)
    while len(shape) > ndim and shape[0] == 1:
        shape = shape[1:]
    return shape


def _rebuild(data, device_type, device_id):
    from ..runtime.context import Context as _Ctx

    ctx = _Ctx(device_type, device_id)
    try:
        return array(data, ctx=ctx, dtype=data.dtype)
    except MXAsyncError:
        return array(data, ctx=_Ctx("cpu", 0), dtype=data.dtype)


def _basic_view(data, key):
    """``data[key]`` as a view; a single element is a (1,)-shaped view, as in MXNet 1.x."""
    key = key if isinstance(key, tuple) else (key,)
    view = data[key if any(k is Ellipsis for k in key) else (*key, Ellipsis)]
    return view.reshape(1) if view.ndim == 0 else view


def _shares(view, base) -> bool:
    return view.base is not None or view is base or view.size == 0


def _is_basic(key) -> bool:
    if isinstance(key, (int, np.integer, slice)) or key is Ellipsis or key is None:
        return True
    if isinstance(key, tuple):
        return all(isinstance(k, (int, np.integer, slice)) or k is Ellipsis or k is None for k in key)
    return False


# -- creation ---------------------------------------------------------------
def _empty(shape, dtype, ctx: Context, op_output: bool = False) -> NDArray:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    chunk = alloc_chunk(shape, dtype if dtype is not None else _DEFAULT_DTYPE, ctx, _xp(ctx), op_output)
    return NDArray(chunk, chunk.base)



def waitall() -> None:
    """Block until every pushed op finished (``mx.nd.waitall``); raises the first unreported error."""
    _engine().wait_for_all()


async def waitall_async() -> None:
    await _engine().wait_for_all_async()


# The modules below build NDArrays, so they import this one: they come last, once NDArray and _empty
# exist (whichever of them is imported first, each finds what it needs).  The creation functions stay
# importable from here (and NDArray's own methods reach array() through them).
from . import _recorded  # noqa: E402 - views as ops while recording
from ._creation import arange, array, empty, full, ones, ones_like, zeros, zeros_like  # noqa: E402
from ._invoke import INLINE_ELEMENTS, invoke, invoke_binary, invoke_scalar  # noqa: E402
