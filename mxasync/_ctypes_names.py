"""The ctypes names of MXNet's ``mxnet.base`` that need no C library (``mx.base`` re-exports them).

MXNet's Python layer talks to ``libmxnet`` through ctypes; mxasync has no such library,
but code written against MXNet (its own test files, extensions) imports these names at
module level and uses the pure-ctypes helpers to build arguments.  They keep MXNet's
meaning: handles are ``c_void_p``, the scalar types are MXNet's, and the ``c_*`` helpers
build the same ctypes arrays.  There is no C API to call: ``_LIB`` is there for the programs
that import it at module level (MXNet's ``example/quantization`` scripts do) and answers every
attribute with an AttributeError naming the C function, and ``check_call`` raises on the non-zero
return codes that nothing here produces.

>>> from mxasync.base import c_str_array, mx_uint
>>> [s for s in c_str_array(["a", "bc"])], mx_uint(3).value
([b'a', b'bc'], 3)
"""

from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["NDArrayHandle", "SymbolHandle", "FunctionHandle", "OpHandle", "CachedOpHandle", "ExecutorHandle",
           "DataIterCreatorHandle", "DataIterHandle", "KVStoreHandle", "RecordIOHandle", "RtcHandle",
           "CudaModuleHandle", "CudaKernelHandle", "ProfileHandle", "DLPackHandle",
           "mx_uint", "mx_int", "mx_int64", "mx_float", "mx_float_p",
           "c_array", "c_array_buf", "c_str_array", "c_handle_array", "ctypes2buffer", "ctypes2numpy_shared",
           "check_call", "_LIB"]

NDArrayHandle = ctypes.c_void_p
SymbolHandle = ctypes.c_void_p
FunctionHandle = ctypes.c_void_p
OpHandle = ctypes.c_void_p
CachedOpHandle = ctypes.c_void_p
ExecutorHandle = ctypes.c_void_p
DataIterCreatorHandle = ctypes.c_void_p
DataIterHandle = ctypes.c_void_p
KVStoreHandle = ctypes.c_void_p
RecordIOHandle = ctypes.c_void_p
RtcHandle = ctypes.c_void_p
CudaModuleHandle = ctypes.c_void_p
CudaKernelHandle = ctypes.c_void_p
ProfileHandle = ctypes.c_void_p
DLPackHandle = ctypes.c_void_p

mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)


def c_array(ctype, values):
    """A ctypes array of ``ctype`` holding ``values``."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype, buf):
    """A ctypes array of ``ctype`` over the memory of ``buf`` (an ``array.array``), without a copy."""
    return (ctype * len(buf)).from_buffer(buf)


def c_str_array(strings):
    """A ``c_char_p`` array of the UTF-8 bytes of ``strings``."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_handle_array(objs):
    """A ``c_void_p`` array of the ``handle`` of each object."""
    arr = (ctypes.c_void_p * len(objs))()
    arr[:] = [o.handle for o in objs]
    return arr


def ctypes2buffer(cptr, length: int) -> bytearray:
    """``length`` bytes at the ``c_char`` pointer ``cptr``, copied into a bytearray."""
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_char)):
        raise TypeError("expected char pointer")
    res = bytearray(length)
    rptr = (ctypes.c_char * length).from_buffer(res)
    if not ctypes.memmove(rptr, cptr, length):
        raise RuntimeError("memmove failed")
    return res


def ctypes2numpy_shared(cptr, shape) -> np.ndarray:
    """A float32 numpy array of ``shape`` sharing the memory at the ``mx_float`` pointer ``cptr``."""
    if not isinstance(cptr, ctypes.POINTER(mx_float)):
        raise RuntimeError("expected float pointer")
    size = 1
    for s in shape:
        size *= s
    dbuffer = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(dbuffer, dtype=np.float32).reshape(shape)


class _NoLibrary:
    """``mxnet.base._LIB`` where there is no libmxnet: importable, never callable."""

    def __getattr__(self, name: str):
        raise AttributeError(f"mxasync has no libmxnet: _LIB.{name} is a C API function of MXNet; "
                             "use the Python API it backs (for quantization: mx.contrib.quantization)")

    def __repr__(self) -> str:
        return "<no libmxnet: mxasync implements MXNet's API in Python>"


_LIB = _NoLibrary()


def check_call(ret) -> None:
    """MXNet's: raise when a C API call returned non-zero (nothing in mxasync returns such codes)."""
    if ret != 0:
        raise RuntimeError(f"C API call failed with return code {ret}")
