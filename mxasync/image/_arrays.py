"""NDArray <-> numpy at the edges of ``mx.image``, and the error it raises.

The image functions do their pixel work in numpy (through the codecs and
resizers of :mod:`mxasync.io.image`) and hand NDArrays back, as MXNet's do.
``to_numpy`` reads an NDArray (a sync point) or passes a numpy array through;
``to_nd`` wraps a freshly made numpy array without copying it, and ``to_result`` hands it back
as the functions' result: an ``mx.np`` array under ``npx.set_np()``, as MXNet's do.

>>> import numpy as np
>>> a = to_nd(np.arange(6, dtype=np.uint8).reshape(2, 3, 1))
>>> a.shape, a.dtype.__name__, int(to_numpy(a)[1, 2, 0])
((2, 3, 1), 'uint8', 5)
"""

from __future__ import annotations

import numpy as np

from ..base import MXAsyncValueError
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ..ndarray._chunk import Chunk
from ..runtime.context import Context, current_context
from ..util import is_np_array

__all__ = ["ImageError", "to_numpy", "to_nd", "to_result", "as_nd", "image_shape", "deliver"]


class ImageError(MXAsyncValueError):
    """A bad argument to an ``mx.image`` function: an ``MXNetError`` that is also a ``ValueError``
    (MXNet raises ``ValueError`` or ``AssertionError`` in these places)."""


def to_numpy(src: NDArray | np.ndarray) -> np.ndarray:
    """A numpy copy of ``src`` that the caller owns (``asnumpy`` of an NDArray: waits for pending writes)."""
    if isinstance(src, NDArray):
        return src.asnumpy()
    return np.array(src)


def to_nd(arr: np.ndarray, ctx: Context | None = None) -> NDArray:
    """An NDArray around ``arr``: no copy on the CPU when ``arr`` is a fresh C-contiguous array
    that nothing else writes to (the arrays our numpy code makes); otherwise a copy."""
    ctx = ctx or current_context()
    if ctx.device_type == "cpu" and isinstance(arr, np.ndarray) and arr.flags.c_contiguous and arr.flags.owndata:
        return NDArray(Chunk(arr, ctx), arr)
    return nd_array(np.ascontiguousarray(arr), ctx=ctx, dtype=arr.dtype)


def to_result(arr: np.ndarray, ctx: Context | None = None) -> NDArray:
    """``to_nd(arr)`` as an image function's result: an ``mx.np`` array in NumPy mode (MXNet 1.9.1's
    ``imread``, ``imresize``, ``fixed_crop``, ... give one there), else an NDArray."""
    out = to_nd(arr, ctx)
    return out.as_np_ndarray() if is_np_array() else out


def as_nd(src: NDArray | np.ndarray, dtype=None) -> NDArray:
    """``src`` as an NDArray (a numpy array is copied, keeping its dtype unless ``dtype`` is given)."""
    if isinstance(src, NDArray):
        return src if dtype is None or np.dtype(dtype) == np.dtype(src.dtype) else src.astype(dtype)
    arr = np.asarray(src)
    return nd_array(arr, dtype=dtype or arr.dtype)


def image_shape(src: NDArray | np.ndarray, where: str) -> tuple[int, int, int]:
    """``(height, width, channels)`` of an HxWxC image; a clear error for any other shape."""
    shape = tuple(src.shape)
    if len(shape) != 3:
        raise ImageError(f"{where}: expected an HxWxC image (3 dimensions), got shape {shape}")
    return shape  # type: ignore[return-value]


def deliver(result: np.ndarray, out: NDArray | None, where: str, what: str = "result") -> NDArray:
    """``result`` as a new NDArray, or written into ``out`` (which must have its shape)."""
    if out is None:
        return to_result(np.ascontiguousarray(result))
    if tuple(out.shape) != result.shape:
        raise ImageError(f"{where}: out has shape {tuple(out.shape)} but the {what} is {result.shape}")
    out[:] = result
    return out
