"""Recorded backward passes for ``autograd.grad(..., create_graph=True)`` (higher-order gradients).

With ``create_graph`` the backward of a node is computed by NDArray op calls made
while recording, so the gradients are themselves in a graph and can be
differentiated again.  Most ops declare their gradient once, as a kernel written
against the array namespace ``xp`` (``lambda xp, x, y, g: g * xp.cos(x)``); for
the ops listed in :data:`XP_KERNEL_OPS` that declaration is evaluated here with
:data:`ND`, a namespace whose functions are NDArray ops, so the one gradient rule
serves both the engine kernel and the recorded graph.  A few ops whose kernels
use more than the namespace offers have a rule of their own in :data:`RULES`.  The
backward of an op that is linear in its input (reshape, slice, sum, transpose, ...;
:data:`LINEAR_OPS`) runs its kernel, and the node recording it differentiates by
applying the op itself.

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

from ..ndarray.invoke import invoke
from ..ndarray.ndarray import NDArray
from ..operator.tensor.elemwise_binary import _ELEMWISE_NAME, BINARY_OPS, SCALAR_OPS
from ..operator.tensor.elemwise_unary import UNARY_OPS

__all__ = ["ND", "XP_KERNEL_OPS", "RULES", "LINEAR_OPS", "rule_for", "LinearBackward", "NonDifferentiable"]


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


ND = _NDNamespace()

#: ops whose declared gradient kernel uses only what :data:`ND` offers (checked by tests/autograd)
XP_KERNEL_OPS = frozenset(
    set(UNARY_OPS) - {"_copy"}
    | {_ELEMWISE_NAME[k] for k in BINARY_OPS} | {f"broadcast_{k}" for k in BINARY_OPS}
    | {k for k, (_, g) in SCALAR_OPS.items() if g is not None}
    | {"Dropout"})


def _clip(prop, og, ins, outs):
    p, x = prop.params, ins[0]
    return [og[0] * ((x >= p.a_min) * (x <= p.a_max))]


def _copy(prop, og, ins, outs):
    return [og[0]]


def _dot2(a, b, ta=False, tb=False):
    return invoke("dot", [a, b], transpose_a=ta, transpose_b=tb)


def _dot(prop, og, ins, outs):
    """``C = op(A) op(B)`` of 2-D arrays: ``dA = og op(B)^T`` and ``dB = op(A)^T og`` (transposed back)."""
    a, b = ins
    p, g = prop.params, og[0]
    if a.ndim != 2 or b.ndim != 2:
        return None
    ta, tb = p.transpose_a, p.transpose_b
    ga = _dot2(b, g, tb, True) if ta else _dot2(g, b, False, not tb)
    gb = _dot2(g, a, True, ta) if tb else _dot2(a, g, not ta, False)
    return [ga, gb]


def _fully_connected(prop, og, ins, outs):
    p, g = prop.params, og[0]
    x, w = ins[0], ins[1]
    if p.flatten:
        x2, g2 = x.reshape((x.shape[0], -1)), g
    else:
        x2, g2 = x.reshape((-1, x.shape[-1])), g.reshape((-1, p.num_hidden))
    gx = _dot2(g2, w).reshape(x.shape)
    gw = _dot2(g2, x2, True, False)
    if p.no_bias:
        return [gx, gw]
    return [gx, gw, invoke("sum", [g2], axis=(0,))]


#: ops with a recorded gradient of their own: ``rule(prop, out_grads, inputs, outputs)`` -> input
#: gradients (None: zero), or None when this call's case is not covered (then the kernel runs)
RULES = {"clip": _clip, "_copy": _copy, "dot": _dot, "FullyConnected": _fully_connected}


def _xp_kernel(prop, og, ins, outs):
    return list(type(prop).bwd(ND, prop.params, og, ins, outs))


def rule_for(prop):
    """The recorded-gradient rule of ``prop``'s op, or None."""
    name = prop.op_name
    if name in RULES:
        return RULES[name]
    if name in XP_KERNEL_OPS and getattr(type(prop), "bwd", None) is not None:
        return _xp_kernel
    return None


#: ops linear in their first input (the others constant: indices, shapes): the gradient of such an
#: op's backward with respect to its output gradient is the op itself (the transpose of a transpose)
LINEAR_OPS = frozenset({
    "Reshape", "Flatten", "expand_dims", "squeeze", "transpose", "SwapAxis", "slice", "slice_axis", "slice_like",
    "take", "sum", "mean", "broadcast_to", "broadcast_axis", "broadcast_like", "tile", "repeat", "Cast",
    "reverse", "pick", "batch_take", "reshape_like", "diag", "space_to_depth", "depth_to_space"})


class LinearBackward:
    """The op of a node ``g = B(og)`` where ``B`` is the backward of a linear op ``f``: its own
    gradient is ``f`` applied to the incoming gradient (with the forward node's other inputs)."""

    zero_gradient = False

    def __init__(self, forward_node) -> None:
        prop = forward_node.prop
        self.op_name = f"_backward_{prop.op_name}"
        self.label = self.op_name
        self.forward_name = prop.op_name
        self.params = prop.params.to_strings(only_set=True)
        self.rest = list(forward_node.inputs[1:])

    def apply_forward(self, v):
        return invoke(self.forward_name, [v, *self.rest], **self.params)


class NonDifferentiable:
    """The op of a node linking a kernel-computed gradient to the graph: it has no gradient itself."""

    zero_gradient = False
    nondifferentiable = True

    def __init__(self, op_name: str) -> None:
        self.op_name = f"_backward_{op_name}"
        self.label = self.op_name

