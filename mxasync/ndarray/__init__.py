"""``mx.nd``: asynchronous NDArrays and one function per registered op.

The op functions are made on first use (``operator/namespace.py``): ``mx.nd.relu`` loads the nn
family then, ``dir(mx.nd)`` lists every op without loading one.
"""

from .. import _seams
from ..operator.namespace import OpNamespace as _OpNamespace
from . import _internal, contrib, image, linalg, random, sparse
from ._dtype_maps import _DTYPE_MX_TO_NP, _DTYPE_NP_TO_MX, _GRAD_REQ_MAP
from ._fluent import attach as _attach_fluent_methods
from ._functions import *  # noqa: F403 - MXNet's Python-level functions (maximum, add, moveaxis, ...)
from ._functions import __all__ as _function_names
from ._interop import attach as _attach_interop
from ._interop import from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write
from ._save_load import load, load_frombuffer, save
from .ndarray import (
    NDArray,
    arange,
    array,
    empty,
    full,
    ones,
    ones_like,
    waitall,
    waitall_async,
    zeros,
    zeros_like,
)
from .random import shuffle  # MXNet has it at both places
from .register import make_function as _make_function

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "zeros_like", "ones_like",
           "waitall", "waitall_async", "save", "load", "load_frombuffer", "shuffle", "from_numpy",
           "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write", "_DTYPE_NP_TO_MX", "_DTYPE_MX_TO_NP",
           "_GRAD_REQ_MAP", *_function_names]

_ops = _OpNamespace(globals(), _make_function, public=True)
_attach_fluent_methods(NDArray, _ops)
_attach_interop(NDArray)


def __getattr__(name: str):
    # mx.nd.CachedOp runs a Symbol's graph on an Executor, a layer above this one: it comes through the
    # executor seam (mxasync/_seams.py), which loads the executor on first use
    if name == "CachedOp":
        value = globals()[name] = _seams.executor.get().CachedOp
        return value
    if name in ("np", "npx", "numpy", "numpy_extension"):
        # mx.nd.np / mx.nd.npx (what hybrid_forward's F.np reaches imperatively; MXNet's mx.nd.numpy and
        # mx.nd.numpy_extension) are mx.np / mx.npx, a layer above this one: they come through the numpy
        # seam (mxasync/_seams.py), loaded on first use
        iface = _seams.numpy.get()
        value = globals()[name] = iface.np if name in ("np", "numpy") else iface.npx
        return value
    return _ops.getattr(__name__, name)


def __dir__():
    return _ops.dir()
