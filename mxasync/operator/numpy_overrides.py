"""The numpy backend's overrides: the generic kernels, run by the numpy backend's runner.

An op's generic kernels take a runner (``run=``, ``operator/kernels/_runner.py``) for the
steps a backend may do its own way.  The numpy backend's runner
(``mxasync.backends.numpy.kernels.runner.NUMPY``: the engine's BLAS, the backend's kernel
threads, cache blocks, the convolution layouts) lives below this layer, which it never
imports; an op family hands it to its kernels here, by registering them with
``register_override(op, "numpy")`` (and for the other host-memory backends,
``numpy_pinned`` and ``numpy_shared``), next to the op's declaration.  ``find_override`` is
the one lookup, as for the CuPy backend's cuDNN kernels.  This is the one module of the
operator layer that imports the numpy backend (``tests/backends/test_plugin_contract.py``).

>>> from mxasync.operator.registry import find_override
>>> from mxasync.backends import get_backend
>>> import mxasync.operator.nn.fully_connected
>>> find_override("FullyConnected", get_backend("cpu"), None).keywords["run"] is NUMPY
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..backends.numpy import NumpyBackend, NumpyPinnedBackend, NumpySharedBackend
from ..backends.numpy.kernels.runner import NUMPY
from .registry import register_override

__all__ = ["NUMPY", "BACKENDS", "register_numpy"]

#: the backends whose arrays are numpy arrays in host memory
BACKENDS = tuple(b.name for b in (NumpyBackend, NumpyPinnedBackend, NumpySharedBackend))


def register_numpy(op_name: str, fwd: Callable | None = None, bwd: Callable | None = None) -> None:
    """Register ``fwd`` / ``bwd`` (kernels taking ``run=``) with ``run=NUMPY`` as the numpy backends'
    kernels for ``op_name`` (``op_name + ".backward"`` for ``bwd``)."""
    for key, fn in ((op_name, fwd), (op_name + ".backward", bwd)):
        if fn is None:
            continue
        bound = functools.partial(fn, run=NUMPY)
        for backend in BACKENDS:
            register_override(key, backend, bound)
