"""``mx.autograd.Function``: a differentiable function written in Python with NDArray ops.

>>> import mxasync as mx
>>> class Square(mx.autograd.Function):
...     def forward(self, x):
...         self.save_for_backward(x)
...         return x * x
...     def backward(self, dy):
...         (x,) = self.saved_tensors
...         return 2 * x * dy
>>> x = mx.nd.array([1.0, 3.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = Square()(x)
>>> y.backward(); x.grad.asnumpy().tolist()
[2.0, 6.0]
"""

from __future__ import annotations

from ..base import MXAsyncError
from ..ndarray import _recording as state
from ..ndarray.ndarray import NDArray, zeros
from .tape import Entry, Node

__all__ = ["Function"]


class _FunctionProp:
    """What the tape and the backward pass ask of a node's op, for a Python Function (a ``TapeOp``)."""

    zero_gradient = False
    tape_backward_recorded = False  # its backward runs with recording paused

    def __init__(self, function: Function) -> None:
        self.function = function
        self.op_name = type(function).__name__
        self.label = f"Function {self.op_name}"

    def tape_backward(self, node, out_grads: list, want: list, train_mode: bool) -> list:
        ograds = [g if g is not None else zeros(o.shape, o.context, o.dtype)
                  for g, o in zip(out_grads, node.outputs, strict=True)]
        return [g if w else None for g, w in zip(run_backward(node, ograds), want, strict=True)]


class Function:
    """Subclass and define ``forward(*inputs)`` and ``backward(*output_grads)`` with NDArray ops.

    ``forward`` runs with recording paused; under ``autograd.record()`` the call becomes one
    node of the graph whose backward calls ``backward`` with the gradients of the outputs and
    takes the returned arrays as the gradients of the inputs. An instance is called once.
    """

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *args) -> None:
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, *output_grads):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def __call__(self, *inputs):
        if self._used:
            raise MXAsyncError(f"{type(self).__name__}: each Function instance can be called only once; "
                               "create a new instance for every call")
        self._used = True
        for k, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise MXAsyncError(f"{type(self).__name__}: input {k} must be an NDArray, got {type(x).__name__}")
        with state.pause(train_mode=state.is_training()):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        for k, o in enumerate(outs):
            if not isinstance(o, NDArray):
                raise MXAsyncError(f"{type(self).__name__}.forward: output {k} must be an NDArray, "
                                   f"got {type(o).__name__}")
            if any(o is x or o._chunk is x._chunk for x in inputs):
                with state.pause():
                    outs[k] = o.copy()  # an output that is an input would lose the input's graph entry
        in_ag = [x._ag for x in inputs]
        if state.is_recording() and any(e is not None for e in in_ag):
            node = Node(_FunctionProp(self), outs[0].context, inputs, in_ag, [], outs, state.is_training())
            for k, o in enumerate(outs):
                o._ag = Entry(node, k)
            state.current_tape().append(node)
        return outs[0] if single else tuple(outs) if isinstance(outputs, tuple) else outs


def run_backward(node, out_grads: list) -> list:
    """The input gradients of a Function node given its output gradients (NDArrays)."""
    fn = node.prop.function
    with state.pause():
        grads = fn.backward(*out_grads)
    grads = [grads] if isinstance(grads, NDArray) else list(grads)
    if len(grads) != len(node.inputs):
        raise MXAsyncError(f"{type(fn).__name__}.backward returned {len(grads)} gradients for "
                           f"{len(node.inputs)} inputs")
    for k, (g, x) in enumerate(zip(grads, node.inputs, strict=True)):
        if not isinstance(g, NDArray) or g.shape != x.shape:
            raise MXAsyncError(f"{type(fn).__name__}.backward: gradient {k} must be an NDArray of shape "
                               f"{x.shape}, got {getattr(g, 'shape', type(g).__name__)}")
    return grads
