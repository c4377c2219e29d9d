"""SimpleOp: MXNet's unified unary/binary op API, registered into the one registry.

Declare the forward once, say which gradient kind it has, and the op appears
to both front ends (``mx.nd.<name>``, ``mx.sym.<name>``):

* ``"out_grad"``: ``grad(xp, env, out_grad)``;
* ``"uses_output"``: ``grad(xp, env, out_grad, out)``;
* ``"uses_input"``: ``grad(xp, env, out_grad, *inputs)``.

Binary ops return ``(lhs_grad, rhs_grad)``.  ``env`` is the validated param
model: ``scalar=True`` gives the op a ``scalar: float`` param, ``param=Model``
any kwargs.

>>> import numpy as np, mxasync as mx
>>> from mxasync.operator import get_op, OpContext
>>> from mxasync.operator.base import WRITE_TO
>>> prop = get_op("smooth_l1").prepare(scalar=1.0)
>>> out = np.empty(3)
>>> prop.forward_fn(mx.cpu())(OpContext(), [np.array([-2.0, 0.5, 3.0])], [WRITE_TO], [out], []); out
array([1.5  , 0.125, 2.5  ])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from .functional import FunctionalProperty, defop
from .params import NoParam, OpParam
from .registry import OpDef

__all__ = ["SimpleOp", "ScalarEnv", "register_simple_op"]

GradKind = Literal["out_grad", "uses_output", "uses_input"]


class ScalarEnv(OpParam):
    scalar: float = 1.0


class SimpleOp:
    """A unary or binary op declared from functions; :meth:`register` puts it in the registry."""

    def __init__(self, name: str, forward: Callable, *, binary: bool = False, gradient: Callable | None = None,
                 grad_kind: GradKind = "uses_input", shape: Callable | None = None, inplace: bool = False,
                 scalar: bool = False, param: type[OpParam] | None = None, resources: tuple = (),
                 aliases: tuple[str, ...] = (), doc: str = ""):
        if grad_kind not in ("out_grad", "uses_output", "uses_input"):
            raise ValueError(f"SimpleOp {name}: grad_kind must be out_grad, uses_output or uses_input")
        self.name, self.forward, self.binary, self.gradient = name, forward, binary, gradient
        self.grad_kind, self.shape, self.inplace, self.resources = grad_kind, shape, inplace, tuple(resources)
        self.param = param or (ScalarEnv if scalar else NoParam)
        self.aliases, self.doc = tuple(aliases), doc

    def _bwd(self):
        grad, kind, binary = self.gradient, self.grad_kind, self.binary
        if grad is None:
            return None

        def bwd(xp, env, og, ins, outs):
            if kind == "out_grad":
                g = grad(xp, env, og[0])
            elif kind == "uses_output":
                g = grad(xp, env, og[0], outs[0])
            else:
                g = grad(xp, env, og[0], *ins)
            return list(g) if binary else [g]

        return bwd

    def _shape(self):
        fn = self.shape
        if fn is None:
            return None
        return lambda prop, in_shapes: [fn(prop.params, *in_shapes)] if all(s is not None for s in in_shapes) \
            else [None]

    def register(self) -> OpDef:
        deps = {"out_grad": "og", "uses_output": "og,out", "uses_input": "og,in"}[self.grad_kind]
        fwd = self.forward
        return defop(self.name, fwd=lambda xp, p, *xs: fwd(xp, p, *xs), bwd=self._bwd(), param=self.param,
                     arguments=("lhs", "rhs") if self.binary else ("data",), shape=self._shape(), deps=deps,
                     fwd_res=self.resources, inplace=self.inplace, aliases=self.aliases,
                     doc=self.doc or f"SimpleOp {self.name}.", base=FunctionalProperty)


def register_simple_op(name: str, forward: Callable, **kwargs) -> OpDef:
    """``SimpleOp(name, forward, **kwargs).register()``."""
    return SimpleOp(name, forward, **kwargs).register()


# -- the worked example: smooth L1 (Fast R-CNN), sigma given as ``scalar`` --------------------
def _smooth_l1(xp, env, x):
    s2 = env.scalar * env.scalar
    ax = xp.abs(x)
    return xp.where(ax < 1.0 / s2, 0.5 * s2 * x * x, ax - 0.5 / s2)


def _smooth_l1_grad(xp, env, og, x):
    s2 = env.scalar * env.scalar
    return og * xp.where(xp.abs(x) < 1.0 / s2, s2 * x, xp.sign(x))


register_simple_op("smooth_l1", _smooth_l1, gradient=_smooth_l1_grad, grad_kind="uses_input", scalar=True,
                   inplace=True, doc="Smooth L1: ``0.5 (sigma x)^2`` if ``|x| < 1/sigma^2`` else "
                                     "``|x| - 0.5/sigma^2``; ``scalar`` is sigma.")
