"""Recorded backward passes for ``autograd.grad(..., create_graph=True)`` (higher-order gradients).

With ``create_graph`` the backward of a node is computed by NDArray op calls made
while recording, so the gradients are themselves in a graph and can be
differentiated again.  What each op offers is declared where the op is defined
(see "What an op declares" in docs/operators.md).  Most ops declare their gradient
once, as a kernel written against the array namespace ``xp`` (``lambda xp, x, y, g:
g * xp.cos(x)``); for the ops that declare ``xp_gradient`` that kernel is evaluated
here with :data:`ND`, a namespace whose functions are NDArray ops, so the one
gradient rule serves both the engine kernel and the recorded graph.  A few ops whose
kernels use more than the namespace offers declare a ``recorded_gradient`` of their
own.  The backward of an op that is linear in its input (reshape, slice, sum,
transpose, ...; ``linear_input``) runs its kernel, and the node recording it
differentiates by applying the op itself.

Every other op (MXNet 1.9.1 also lacks second derivatives for most of them) still
gets its first gradient, from its kernel; the result is linked to the graph by a
node that refuses to be differentiated, so differentiating it again raises an
error naming ``_backward_<op>``, as MXNet does.

>>> import mxasync as mx
>>> x = mx.nd.array([0.5]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.sin(x)
...     dx = mx.autograd.grad(y, [x], create_graph=True)[0]   # cos(x)
>>> dx.backward()                                               # d cos(x) / dx = -sin(x)
>>> round(float(x.grad.asscalar()), 6) == round(-float(mx.nd.sin(x).asscalar()), 6)
True
"""

from __future__ import annotations

import numpy as np

from ..base import MXAsyncError
from ..ndarray._invoke import invoke
from ..ndarray.ndarray import NDArray

__all__ = ["ND", "rule_for", "LinearBackward", "NonDifferentiable"]


def _unary(op_name: str, np_fn):
    def fn(x):
        return invoke(op_name, [x]) if isinstance(x, NDArray) else np_fn(x)

    fn.__name__ = op_name
    return fn


def _binary(np_fn, nd_fn):
    def fn(a, b):
        if isinstance(a, NDArray) or isinstance(b, NDArray):
            return nd_fn(a, b)
        return np_fn(a, b)

    return fn


def _broadcast_to(x, shape):
    shape = tuple(shape)
    return x if x.shape == shape else invoke("broadcast_to", [x], shape=shape)


def _extremum(op: str):
    def nd_fn(a, b):
        if not isinstance(a, NDArray):
            a, b = b, a
        if isinstance(b, NDArray):
            return invoke(f"broadcast_{op}", [a, b])
        return invoke(f"_{op}_scalar", [a], scalar=float(b))

    return nd_fn


class _NDNamespace:
    """The part of the array namespace that gradient kernels use, as recorded NDArray ops.

    Python scalars (an op's ``scalar`` param) go to numpy; arithmetic operators are NDArray's own.
    """

    def __init__(self) -> None:
        for name in ("abs", "sign", "sqrt", "cbrt", "square", "reciprocal", "exp", "log", "log2", "log10",
                     "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                     "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "negative"):
            setattr(self, name, _unary(name, getattr(np, name)))
        self.power = _binary(np.power, lambda a, b: a ** b)
        self.mod = _binary(np.mod, lambda a, b: a % b)
        self.maximum = _binary(np.maximum, _extremum("maximum"))
        self.minimum = _binary(np.minimum, _extremum("minimum"))
        self.broadcast_to = _broadcast_to

    @staticmethod
    def invoke(op_name: str, inputs: list, **params):
        """Run op ``op_name`` on NDArrays (recorded); what an op's ``recorded_gradient`` calls."""
        return invoke(op_name, inputs, **params)


ND = _NDNamespace()


def _xp_kernel(nd, prop, og, ins, outs):
    return list(type(prop).bwd(nd, prop.params, og, ins, outs))


def rule_for(prop):
    """The recorded-gradient rule of ``prop``'s op, or None: its ``recorded_gradient``, else its
    backward kernel run on :data:`ND` when the op declares ``xp_gradient``.  A rule is called as
    ``rule(ND, prop, out_grads, inputs, outputs)``."""
    cls = type(prop)
    rule = getattr(cls, "recorded_gradient", None)
    if rule is not None:
        return rule
    if getattr(cls, "xp_gradient", False) and getattr(cls, "bwd", None) is not None:
        return _xp_kernel
    return None


class LinearBackward:
    """The op of a node ``g = B(og)`` where ``B`` is the backward of a linear op ``f``: its own
    gradient is ``f`` applied to the incoming gradient (with the forward node's other inputs)."""

    zero_gradient = False
    tape_backward_recorded = True  # applying f is a recorded call: differentiable again

    def __init__(self, forward_node) -> None:
        prop = forward_node.prop
        self.op_name = f"_backward_{prop.op_name}"
        self.label = self.op_name
        self.forward_name = prop.op_name
        self.params = prop.params.to_strings(only_set=True)
        self.rest = list(forward_node.inputs[1:])

    def tape_backward(self, node, out_grads: list, want: list, train_mode: bool) -> list:
        return [invoke(self.forward_name, [out_grads[0], *self.rest], **self.params)]


class NonDifferentiable:
    """The op of a node linking a kernel-computed gradient to the graph: it has no gradient itself."""

    zero_gradient = False
    tape_backward_recorded = True  # always asked, and refuses

    def __init__(self, op_name: str) -> None:
        self.op_name = f"_backward_{op_name}"
        self.label = self.op_name

    def tape_backward(self, node, out_grads: list, want: list, train_mode: bool) -> list:
        raise MXAsyncError(f"autograd: Operator {self.op_name} is non-differentiable: the gradient was computed "
                           f"with create_graph=True through {self.op_name[len('_backward_'):]}, which has no "
                           "recorded gradient rule (higher-order gradients cover the ops listed in "
                           "docs/autograd.md)")
