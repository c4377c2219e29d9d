"""The numpy backend.

Generic kernels run on it as written, with its runner: the fast paths of
:mod:`.kernels` (GEMMs on its own BLAS, kernel threads, cache blocks, the
convolution layouts).  The op families register their kernels bound to that
runner with ``register_override(..., "numpy")`` (``operator/numpy_overrides.py``),
which keeps the dependency direction (backends never import the operator layer).

>>> from mxasync.backends.numpy import NumpyBackend
>>> b = NumpyBackend(); b.start(); b.xp.__name__
'numpy'
"""

from __future__ import annotations

import numpy

from ..base import Backend

__all__ = ["NumpyBackend", "NumpyPinnedBackend", "NumpySharedBackend"]


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"
    priority = 0

    def start(self) -> None:
        self.xp = numpy

    def empty(self, shape, dtype, ctx):
        return numpy.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype, ctx):
        return numpy.zeros(shape, dtype=dtype)

    def asarray(self, data, ctx, dtype=None):
        return numpy.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        return numpy.asarray(array)


class NumpyPinnedBackend(NumpyBackend):
    """``cpu_pinned`` contexts hold host memory; numpy serves them (pinning is a GPU-copy detail)."""

    name = "numpy_pinned"
    device_type = "cpu_pinned"


class NumpySharedBackend(NumpyBackend):
    """``cpu_shared`` contexts (MXNet's inter-process arrays) are host memory too; numpy serves them."""

    name = "numpy_shared"
    device_type = "cpu_shared"
