"""``mx.nd``: asynchronous NDArrays and one function per registered op."""

from .ndarray import (
    NDArray, arange, array, empty, full, ones, ones_like, waitall, waitall_async, zeros, zeros_like,
)
from .register import populate as _populate

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "zeros_like", "ones_like",
           "waitall", "waitall_async"]

_populate(globals())
