"""mxasync: an MXNet-style deep-learning runtime on an asyncio dependency engine.

``import mxasync as mx`` gives MXNet 1.x names; every blocking call has an
awaitable twin for async code.

``import mxasync`` loads the operator registry and the common ops (``mx.nd``, autograd, the
optimizers: about 1 s of CPU), so an event loop's first arrays never wait for an import
(mxasync/loading.py); every other subpackage loads on first use (``mx.gluon``, ``mx.sym``,
...).  With ``MXASYNC_PRELOAD=0``, and for mxasync's own command line (``mxasync --help``
stays fast), the import costs almost nothing and ``mx.nd`` loads on first use too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import _seams
from . import loading as _loading

__version__ = "0.1.0"

if TYPE_CHECKING:  # what the lazy loading below gives, spelled out for type checkers and editors
    from . import (
        attribute,
        autograd,
        backends,
        callback,
        context,
        contrib,
        engine,
        error,
        executor,
        gluon,
        image,
        initializer,
        io,
        kvstore,
        log,
        lr_scheduler,
        metric,
        model,
        module,
        monitor,
        name,
        ndarray,
        numpy,
        numpy_extension,
        onnx,
        operator,
        optimizer,
        profiler,
        random,
        recordio,
        registry,
        rnn,
        symbol,
        test_utils,
        util,
        visualization,
        viz,
    )
    from . import image as img
    from . import initializer as init
    from . import kvstore as kv
    from . import module as mod
    from . import monitor as mon
    from . import ndarray as nd
    from . import numpy as np
    from . import numpy_extension as npx
    from . import optimizer as opt
    from . import random as rnd
    from . import symbol as sym
    from .base import MXAsyncError, MXNetError
    from .context import Context, cpu, cpu_pinned, cpu_shared, current_context, device, gpu, num_gpus
    from .loading import preload, preload_async
    from .symbol._naming import AttrScope
    from .symbol.numpy import _symbol as np_symbol
    from .util import is_np_array, is_np_shape, np_array, np_shape, set_np_shape, use_np, use_np_array, use_np_shape

# The modules that install the seams lower layers call up through (mxasync/_seams.py): a seam used
# before its layer was imported loads it then.
_seams.recorder.provider = f"{__name__}.autograd"
_seams.executor.provider = f"{__name__}.executor"
_seams.wrap_array.provider = f"{__name__}.ndarray"
_seams.subgraph.provider = f"{__name__}.symbol._control_flow"
_seams.control_flow.provider = f"{__name__}.executor.control_flow"
_seams.numpy.provider = f"{__name__}.numpy_extension"
_seams.symbol_op.provider = f"{__name__}.symbol"

# the registry and the common ops load now, so an event loop's first arrays find them loaded
# (mxasync/loading.py says when they do not: MXASYNC_PRELOAD=0, the command line)
_loading.load_at_import()

_SUBMODULES = (
    "autograd", "backends", "callback", "context", "contrib", "engine", "executor", "gluon", "image",
    "initializer", "io", "kvstore", "lr_scheduler", "metric", "model", "module", "monitor", "ndarray", "operator",
    "onnx", "optimizer", "profiler", "random", "recordio", "rnn", "runtime", "symbol", "test_utils", "util", "viz",
    "attribute", "name", "registry", "numpy", "numpy_extension", "error", "log", "visualization",
    "symbol.numpy._symbol", "numpy_op_signature",
)
_ALIASES = {"init": "initializer", "kv": "kvstore", "mod": "module", "nd": "ndarray", "opt": "optimizer",
            "sym": "symbol", "mon": "monitor", "img": "image",
            "np": "numpy", "npx": "numpy_extension", "rnd": "random", "np_symbol": "symbol.numpy._symbol"}
_NAMES = {
    "MXAsyncError": "base", "MXNetError": "base",
    "Context": "context", "cpu": "context", "cpu_pinned": "context", "device": "context",
    "cpu_shared": "context", "current_context": "context", "gpu": "context",
    "num_gpus": "context",
    "AttrScope": "symbol._naming",
    "is_np_shape": "util", "np_shape": "util", "set_np_shape": "util", "is_np_array": "util", "np_array": "util",
    "use_np": "util", "use_np_array": "util", "use_np_shape": "util",
    "preload": "loading", "preload_async": "loading",
}

__all__ = [
    "MXAsyncError", "MXNetError", "Context", "device", "cpu", "gpu", "cpu_pinned", "cpu_shared",
    "current_context", "num_gpus", "backends", "context", "engine", "executor", "io", "operator", "profiler",
    "random", "recordio", "nd", "ndarray", "sym", "symbol", "viz", "name", "AttrScope", "callback", "initializer",
    "init", "lr_scheduler", "metric", "optimizer", "opt", "kv", "kvstore", "mod", "module", "model",
    "image", "autograd", "test_utils", "rnn", "util", "attribute", "np_shape", "is_np_shape", "set_np_shape",
    "contrib", "gluon", "onnx",
    "monitor", "mon", "img", "registry", "preload", "preload_async", "np", "npx", "numpy", "numpy_extension",
    "runtime", "is_np_array", "np_array", "use_np", "use_np_array", "use_np_shape", "rnd", "np_symbol", "error",
    "log", "visualization",
]


def __getattr__(name: str):
    sub = _ALIASES.get(name, name)
    if sub in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{sub}")
    elif name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    else:
        raise AttributeError(f"module 'mxasync' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
