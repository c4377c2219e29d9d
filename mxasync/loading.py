"""Loading the heavy parts of the package ahead of use, before an event loop needs them.

``mx.nd`` loads numpy, pydantic, the engine and, one family at a time, the ops it is
asked for, and pydantic builds each op's param model on its first use: about 1 s of CPU
for a first array, gradient and training step on 2 cores.  Done on first use inside a
running event loop, that would hold the loop meanwhile (a 100 Hz ticker missed ~100
ticks).  So ``import mxasync`` does it (:func:`load_at_import`): scripts and services
import at the top of a module, before their loop runs, and the loop never stalls for it.

* ``MXASYNC_PRELOAD=0`` keeps ``import mxasync`` lazy (each part then loads on first use,
  ``import mxasync`` takes a few ms); mxasync's own command line (``mxasync ...``,
  ``python -m mxasync``) and ``multiprocessing`` children are always lazy.
* ``await mx.preload_async()`` loads the parts named in a worker thread while the loop
  keeps running (for code that imports mxasync lazily); ``mx.preload()`` is its sync twin.

The load runs in the importing thread, not in a background one: Python's imports of a
package with import cycles from two threads at once can hand one of them a partially
initialised module, and a fork during such a load could leave its child a module lock
held by a thread it does not have.

>>> import mxasync as mx
>>> mx.preload("ndarray")
>>> import sys; "mxasync.ndarray" in sys.modules
True
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ["preload", "preload_async", "load_at_import", "AT_IMPORT", "COMMON_OPS"]

#: what loads the operator registry (``symbol`` and ``ndarray`` derive every op from it)
DEFAULT = ("ndarray", "symbol")
#: what ``import mxasync`` loads: the registry and the layers a first array, gradient and training step use
AT_IMPORT = ("ndarray", "autograd", "optimizer")
#: ops whose families ``import mxasync`` loads and whose param models it builds (pydantic builds one on
#: its first use, ~10 ms each): a first array, arithmetic, a layer's forward and backward, a loss, an
#: SGD or Adam step
COMMON_OPS = ("_ones", "_zeros", "_full", "_arange", "_mul_scalar", "_plus_scalar", "_minus_scalar", "_div_scalar",
              "_rdiv_scalar", "_power_scalar", "_copyto", "Cast", "FullyConnected", "Convolution", "Pooling",
              "Activation", "BatchNorm", "Dropout", "Flatten", "Reshape", "transpose", "expand_dims", "Concat",
              "softmax", "log_softmax", "SoftmaxOutput", "softmax_cross_entropy", "pick", "one_hot", "sum", "mean",
              "max", "argmax", "clip", "dot", "batch_dot", "Embedding", "elemwise_add", "broadcast_add",
              "broadcast_mul", "sgd_update", "sgd_mom_update", "adam_update", "_random_uniform", "_random_normal")


def preload(*names: str) -> None:
    """Import ``mxasync.<name>`` for each name (default: ``ndarray`` and ``symbol``)."""
    for name in names or DEFAULT:
        importlib.import_module(f"mxasync.{name}")


async def preload_async(*names: str) -> None:
    """:func:`preload` in a worker thread: the caller's event loop keeps running meanwhile."""
    import asyncio  # here: the lazy ``import mxasync`` of the command line does not pay for asyncio

    await asyncio.to_thread(preload, *names)


def _wanted() -> bool:
    if os.environ.get("MXASYNC_PRELOAD", "1").strip() == "0":
        return False
    argv0 = os.path.basename(sys.argv[0]) if getattr(sys, "argv", None) else ""
    if argv0 in ("mxasync", "mxasync.exe", "-m"):  # our command line (or a -m target still being located)
        return False
    mp = sys.modules.get("multiprocessing")
    return mp is None or mp.parent_process() is None  # a worker process loads what it uses


def load_at_import() -> None:
    """What ``import mxasync`` loads (see the module doc for when it does not)."""
    if not _wanted():
        return
    preload(*AT_IMPORT)
    try:
        importlib.import_module("mxasync.backends").get_backend("cpu")  # entry points read, numpy's started
    except Exception:  # noqa: BLE001 - a bad MXASYNC_BACKEND_CPU, say: the first cpu array reports it, not the import
        pass
    registry = importlib.import_module("mxasync.operator.registry")
    for op in COMMON_OPS:
        registry.get_op(op).param_cls.build_schema()
