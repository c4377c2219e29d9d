"""NDArrays and other array libraries: ``__array__``, DLPack both ways, zero-copy ``from_numpy``,
and pickling state as MXNet's raw bytes (``__getstate__``/``__setstate__``).

>>> import numpy as np, mxasync as mx
>>> a = mx.nd.array([1.0, 2.0])
>>> np.asarray(a).tolist(), np.add(a, 1).tolist()
([1.0, 2.0], [2.0, 3.0])
>>> b = mx.nd.from_dlpack(a.to_dlpack_for_read()); b.asnumpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import _seams
from ..base import MXAsyncError, MXAsyncValueError
from ..runtime.context import Context
from ._chunk import Chunk
from ._serialization import ArrayRecord, dumps_arrays
from ._serialization.reader import Reader, np_alloc, read_array
from .ndarray import NDArray, array

__all__ = ["from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write"]

_CPU_DLPACK_DEVICE = 1  # kDLCPU
_GPU_DLPACK_DEVICE = 2  # kDLCUDA


def _wrap(data, ctx: Context) -> NDArray:
    """An NDArray over ``data`` itself (no copy): a chunk of its own, so a fresh engine var."""
    return NDArray(Chunk(data, ctx), data)


_seams.wrap_array.install(_wrap)  # what Python custom ops (operator/custom.py) wrap their buffers with


# -- numpy protocol -----------------------------------------------------------
def _array(self: NDArray, dtype=None, copy=None) -> np.ndarray:
    """``np.asarray(x)``: the values, after pending writes (always a copy: the engine may write later)."""
    if copy is False:
        raise ValueError("NDArray.__array__: a view is impossible (the engine owns the memory); "
                         "use asnumpy() or mx.nd.to_dlpack_for_read for a shared buffer")
    out = self.asnumpy()
    return out if dtype is None else out.astype(dtype, copy=False)


# -- DLPack ---------------------------------------------------------------------
def _dlpack(self: NDArray, stream=None, **kwargs):
    """The DLPack capsule of the contents, after pending writes (reads may follow it)."""
    self.wait_to_read()
    return self._data.__dlpack__(**({"stream": stream} if stream is not None else {}))


def _dlpack_device(self: NDArray) -> tuple[int, int]:
    if self._ctx.device_type == "gpu":
        return (_GPU_DLPACK_DEVICE, self._ctx.device_id)
    return (_CPU_DLPACK_DEVICE, 0)


def to_dlpack_for_read(data: NDArray):
    """A DLPack capsule sharing ``data``'s memory for reading (waits for pending writes)."""
    if not isinstance(data, NDArray):
        raise MXAsyncError(f"to_dlpack_for_read: expected an NDArray, got {type(data).__name__}")
    data.wait_to_read()
    return data._data.__dlpack__()


def to_dlpack_for_write(data: NDArray):
    """A DLPack capsule sharing ``data``'s memory for writing (waits for pending reads and writes)."""
    if not isinstance(data, NDArray):
        raise MXAsyncError(f"to_dlpack_for_write: expected an NDArray, got {type(data).__name__}")
    data.wait_to_write()
    return data._data.__dlpack__()


class _Capsule:
    """Wraps a bare capsule so ``from_dlpack`` (numpy's and CuPy's want ``__dlpack__``) accepts it."""

    def __init__(self, capsule, device: tuple[int, int] = (_CPU_DLPACK_DEVICE, 0)) -> None:
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    # the first members of DLPack's DLTensor (what a "dltensor" capsule points to, via DLManagedTensor)
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


def _capsule_device(capsule) -> tuple[int, int] | None:
    """(device type, id) that a bare, unconsumed "dltensor" capsule describes; None if it is not one.

    MXNet's ``to_dlpack_for_read`` hands out bare capsules, which carry no ``__dlpack_device__``,
    so the device is read from the DLTensor itself (a CUDA tensor must go to CuPy, not numpy).
    """
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, b"dltensor"):
        return None
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    head = _DLTensorHead.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor"))
    return int(head.device.device_type), int(head.device.device_id)


def from_dlpack(dlpack) -> NDArray:
    """An NDArray sharing the memory of a DLPack capsule or of an object with ``__dlpack__``.

    CPU memory becomes a ``cpu(0)`` array; CUDA memory a ``gpu(i)`` array (with CuPy).
    """
    if hasattr(dlpack, "__dlpack_device__"):
        device = tuple(dlpack.__dlpack_device__())
    else:
        device = _capsule_device(dlpack)
        if device is not None:
            dlpack = _Capsule(dlpack, device)
    if device is not None and device[0] == _GPU_DLPACK_DEVICE:
        try:
            import cupy
        except ImportError:
            raise MXAsyncError(f"from_dlpack: the tensor is in CUDA memory (device {device[1]}); reading it "
                               f"needs CuPy (pip install 'mxasync[gpu]')") from None
        return _wrap(cupy.from_dlpack(dlpack), Context("gpu", device[1]))
    source = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    try:
        data = np.from_dlpack(source)
    except (TypeError, BufferError, RuntimeError) as e:
        raise MXAsyncError(f"from_dlpack: cannot import this DLPack object ({e})") from e
    if not data.flags.writeable:
        data = _writable(data)
    return _wrap(data, Context("cpu", 0))


def _writable(data: np.ndarray) -> np.ndarray:
    """numpy marks arrays from bare (unversioned) capsules read-only; MXNet's from_dlpack gives a
    writable array over the same memory, so view that memory writably, keeping ``data`` (and so
    the capsule's owner) alive through the view's base."""
    if not data.flags.c_contiguous or data.size == 0:
        return data.copy()
    raw = (ctypes.c_char * data.nbytes).from_address(data.__array_interface__["data"][0])
    raw._owner = data  # ctypes objects take attributes: the exporter lives as long as the view
    return np.frombuffer(raw, dtype=data.dtype).reshape(data.shape)


# -- numpy, zero copy ------------------------------------------------------------
def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """An NDArray with ``ndarray``'s values, shape and dtype.

    ``zero_copy=True`` (MXNet's default) shares the memory: the NDArray becomes its owner and
    the numpy array is made read-only, so writes go through the NDArray (and the engine's
    ordering). It needs a C-contiguous array (``ValueError`` otherwise, as MXNet).
    ``zero_copy=False`` copies.

    >>> a = np.arange(4.0)
    >>> x = from_numpy(a); x[1] = 9; a.tolist(), a.flags.writeable
    ([0.0, 9.0, 2.0, 3.0], False)
    """
    if not isinstance(ndarray, np.ndarray):
        raise MXAsyncError(f"mx.nd.from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy:
        return array(ndarray, ctx=Context("cpu", 0), dtype=ndarray.dtype)
    if not ndarray.flags.c_contiguous:
        raise MXAsyncValueError("mx.nd.from_numpy(zero_copy=True): the array must be C-contiguous; "
                                "call np.ascontiguousarray first or pass zero_copy=False")
    if ndarray.flags.writeable:
        ours = ndarray.view()  # keeps write access after the user's array is locked below
        ndarray.flags.writeable = False
    else:  # locked already (e.g. shared before): MXNet shares it again, writable through the NDArray
        ours = _writable(ndarray)
    return _wrap(ours, Context("cpu", 0))


# -- pickling state as MXNet's raw bytes -------------------------------------------
_LIST_HEADER = 24  # file magic, reserved word, array count
_NAME_COUNT = 8


def _getstate(self: NDArray) -> dict:
    """``{'handle': bytearray}``: the array in MXNet's single-array binary form (``MXNDArraySaveRawBytes``)."""
    blob = dumps_arrays([ArrayRecord(self.asnumpy(), (self._ctx.device_typeid, self._ctx.device_id))])
    return {"handle": bytearray(blob[_LIST_HEADER:-_NAME_COUNT])}


def _setstate(self: NDArray, state: dict) -> None:
    """Load MXNet's raw bytes into this object; a GPU array without a GPU lands on the CPU."""
    from ._save_load import _to_ndarray

    handle = state.get("handle") if isinstance(state, dict) else None
    if handle is None:
        raise MXAsyncError("NDArray.__setstate__: expected a dict with a 'handle' of raw bytes")
    loaded = _to_ndarray(read_array(Reader(bytes(handle)), 0, np_alloc), {})
    self._chunk, self._data, self._ctx, self._ag = loaded._chunk, loaded._data, loaded._ctx, None


def attach(cls: type) -> None:
    cls.__array__ = _array
    cls.__dlpack__ = _dlpack
    cls.__dlpack_device__ = _dlpack_device
    cls.to_dlpack_for_read = to_dlpack_for_read
    cls.to_dlpack_for_write = to_dlpack_for_write
    cls.__getstate__ = _getstate
    cls.__setstate__ = _setstate

