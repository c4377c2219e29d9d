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

from ..ndarray import _recording as state  # the flags live below NDArray; this is their public face
from ..ndarray._recording import (
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)
from . import recorder as _recorder  # noqa: F401 - installs the recorder NDArray calls
from .backprop import backward, grad
from .function import Function
from .tape import mark_variables

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
           "set_training", "backward", "grad", "mark_variables", "state", "Function", "get_symbol", "NDArray",
           "Symbol", "array"]


def __getattr__(name: str):
    # ``from mxnet.autograd import *`` also hands out NDArray, Symbol and array (MXNet's module imports
    # them; its tests rely on it), and MXNet keeps get_symbol here although it builds a Symbol: the
    # symbol layer sits above this one, so this face looks them up on first use (tests/test_layering.py
    # allows exactly this)
    if name in ("NDArray", "array"):
        from .. import ndarray

        return getattr(ndarray, name)
    if name in ("Symbol", "get_symbol"):
        from .. import symbol
        from ..symbol._recorded import get_symbol

        return symbol.Symbol if name == "Symbol" else get_symbol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
