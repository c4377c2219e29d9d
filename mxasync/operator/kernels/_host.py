"""Host-array services for the kernels: the numpy backend's BLAS and kernel threads.

The one place the operator layer reaches the numpy backend's internals.  Kernels use
these only for numpy arrays (behind ``xp is numpy``): they make the generic kernel fast
on host memory, whichever backend serves the device (the numpy backend, or a plugin whose
``xp`` is numpy).  A kernel that replaces an op *for a backend* (cuDNN for CuPy, a
plugin's own) is not written here: it goes through the one seam, ``Backend.overrides`` /
``register_override``, called by the contract in :mod:`mxasync.operator.overrides`.
"""

from __future__ import annotations

from ...backends.numpy import parallel
from ...backends.numpy.blas import matmul, matmul_into_rows

__all__ = ["parallel", "matmul", "matmul_into_rows"]
