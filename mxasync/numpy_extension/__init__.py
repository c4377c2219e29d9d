"""``mx.npx``: MXNet's extensions to the NumPy interface.

The switches (``set_np``, ``reset_np``, ``use_np``, ``np_shape``, ...), the context helpers,
and neural-network operators taking and giving ``mx.np`` arrays (ops of the one registry).

>>> from mxasync import np, npx
>>> npx.relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""

from __future__ import annotations

from ..numpy._frontend import bind as _bind
from ..numpy.multiarray import F as _F
from ..runtime.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from ..util import (
    is_np_array,
    is_np_default_dtype,
    is_np_shape,
    np_array,
    np_default_dtype,
    np_shape,
    reset_np,
    set_np,
    set_np_shape,
    use_np,
    use_np_array,
    use_np_default_dtype,
    use_np_shape,
)
from . import image, random
from ._api import FUNCS as _FUNCS
from .io import load, save, savez
from .random import seed

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "is_np_default_dtype", "use_np", "use_np_array",
           "use_np_shape", "use_np_default_dtype", "np_shape", "np_array", "np_default_dtype", "set_np_shape",
           "waitall", "seed", "cpu", "gpu", "cpu_pinned", "num_gpus", "current_context", "Context", "random", "image",
           "load", "save", "savez", *_FUNCS]

globals().update(_bind(_F, _FUNCS))


def _install_seam() -> None:
    """Give the layers below what they reach up for: mx.np's array class, mx.nd.np and mx.nd.npx."""
    import sys
    from types import SimpleNamespace

    from .. import _seams
    from .. import numpy as _np_module

    _seams.numpy.install(SimpleNamespace(ndarray=_np_module.ndarray, np=_np_module, npx=sys.modules[__name__]))


_install_seam()


def waitall() -> None:
    """Block until every pushed op finished (``mx.nd.waitall``)."""
    from ..ndarray import waitall as _waitall

    _waitall()
