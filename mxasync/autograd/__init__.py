"""``mx.autograd``: MXNet 1.9's imperative automatic differentiation on the engine.

Inside :func:`record`, every op call whose inputs reach a variable (an array
with ``attach_grad()``) is appended to a tape; :func:`backward` pushes the
recorded ops' backward functions to the engine, newest first, and fills the
variables' ``.grad``.  See ``docs/autograd.md``.

>>> import mxasync as mx
>>> w = mx.nd.array([[1.0, 2.0]]); w.attach_grad()
>>> x = mx.nd.array([[3.0, 4.0]])
>>> with mx.autograd.record():
...     loss = (mx.nd.dot(x, w.T) ** 2).sum()
>>> loss.backward()
>>> w.grad.asnumpy().tolist()     # 2 * (x . w) * x = 2 * 11 * [3, 4]
[[66.0, 88.0]]
"""

from __future__ import annotations

from . import state
from .state import (
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)

# the tape and backward build on NDArray, whose op calls import ``state`` from here: they load on first use
_LATE = {"backward": "backprop", "grad": "backprop", "Function": "function", "get_symbol": "function",
         "mark_variables": "tape"}

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
           "set_training", "backward", "grad", "mark_variables", "state", "Function", "get_symbol", "NDArray",
           "Symbol", "array"]


def __getattr__(name: str):
    if name in _LATE:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LATE[name]}"), name)
        globals()[name] = value
        return value
    # ``from mxnet.autograd import *`` also hands out NDArray, Symbol and array (MXNet's module imports
    # them; its tests rely on it); the symbol layer loads after this package, so look them up late
    if name in ("NDArray", "array"):
        from .. import ndarray

        return getattr(ndarray, name)
    if name == "Symbol":
        from ..symbol import Symbol

        return Symbol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
