"""mxasync: an MXNet-style deep-learning runtime on an asyncio dependency engine.

``import mxasync as mx`` gives MXNet 1.x names; every blocking call has an
awaitable twin for async code.
"""

# attribute and name import symbol, which needs ndarray and autograd loaded first: keep this order
from . import (  # noqa: I001
    autograd,
    backends,
    callback,
    context,
    contrib,
    engine,
    executor,
    gluon,
    image,
    initializer,
    io,
    kvstore,
    lr_scheduler,
    metric,
    model,
    module,
    monitor,
    ndarray,
    operator,
    optimizer,
    profiler,
    random,
    recordio,
    rnn,
    symbol,
    test_utils,
    util,
    viz,
)
from . import attribute, name
from . import initializer as init
from . import kvstore as kv
from . import module as mod
from . import image as img
from . import monitor as mon
from . import ndarray as nd
from . import optimizer as opt
from . import symbol as sym
from .base import MXAsyncError, MXNetError
from .runtime.context import Context, cpu, cpu_pinned, cpu_shared, current_context, gpu, num_gpus
from .symbol.naming import AttrScope
from .util import is_np_shape, np_shape, set_np_shape

__version__ = "0.1.0"

__all__ = [
    "MXAsyncError", "MXNetError", "Context", "cpu", "gpu", "cpu_pinned", "cpu_shared",
    "current_context", "num_gpus", "backends", "context", "engine", "executor", "io", "operator", "profiler",
    "random", "recordio", "nd", "ndarray", "sym", "symbol", "viz", "name", "AttrScope", "callback", "initializer",
    "init", "lr_scheduler", "metric", "optimizer", "opt", "kv", "kvstore", "mod", "module", "model",
    "image", "autograd", "test_utils", "rnn", "util", "attribute", "np_shape", "is_np_shape", "set_np_shape",
    "contrib", "gluon",
    "monitor", "mon", "img",
]
