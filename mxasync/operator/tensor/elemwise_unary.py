"""Elementwise unary ops (abs, sqrt, exp, tanh, sigmoid, relu, ...) and clip.

Each op is one row: forward ``f(xp, x)``, and its gradient as a function of
the input (``deps='og,in'``) or of the output (``deps='og,out'``), so the
memory planner keeps only what backward reads.  Ufunc-backed ops write straight
into the output (no temporary) when ``req`` is a write.

>>> import numpy as np, mxasync as mx
>>> from mxasync.operator import get_op, OpContext
>>> from mxasync.operator.base import WRITE_TO
>>> out = np.empty(3)
>>> get_op("relu").prepare().forward_fn(mx.cpu())(OpContext(), [np.array([-1., 0., 2.])], [WRITE_TO], [out], [])
>>> out
array([0., 0., 2.])
"""

from __future__ import annotations

import math

import numpy as _np

from ..base import ADD_TO, NULL, WRITE_INPLACE, WRITE_TO
from ..functional import FunctionalOperator, FunctionalProperty, defop
from ..params import Field, OpParam

__all__ = ["UNARY_OPS", "SameAsInputProperty", "UfuncOperator"]


class UfuncOperator(FunctionalOperator):
    """Writes the ufunc of its inputs (one or two) straight into the output (the unary and binary ops)."""

    __slots__ = ("ufunc",)

    def forward(self, op_ctx, in_data, req, out_data, aux):
        r = req[0]
        if r is WRITE_TO or r is WRITE_INPLACE:
            try:
                self.ufunc(*in_data, out=out_data[0])
            except TypeError:  # an integer output of a float-valued ufunc (int / int, sqrt(int)):
                # compute in floating point and cast, truncating toward zero as MXNet's C kernels do
                with _np.errstate(invalid="ignore", divide="ignore"):  # NaN/inf cast as C does, silently
                    FunctionalOperator.forward(self, op_ctx, in_data, req, out_data, aux)
        elif r is ADD_TO:
            out_data[0] += self.ufunc(*in_data)
        elif r is not NULL:
            FunctionalOperator.forward(self, op_ctx, in_data, req, out_data, aux)


class SameAsInputProperty(FunctionalProperty):
    """One input, and an output of its shape and dtype (the unary and the tensor-scalar ops)."""

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        return [s], [s], []

    def infer_type(self, in_types):
        t = in_types[0]
        return [t], [t], []


class _UnaryProperty(SameAsInputProperty):
    ufunc_name: str | None = None

    def create_operator(self, ctx):
        op = super().create_operator(ctx)
        name = self.ufunc_name
        if name is None or op.fwd is not type(self).fwd:  # overridden kernels go through assign
            return op
        fast = UfuncOperator(self, op.xp, op.fwd, op.bwd)
        fast.ufunc = getattr(op.xp, name)
        return fast


def _zero(xp, x, y, g):
    return None


_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _exp(xp, x):
    """``exp``; float32 on the numpy backend through float64, so the result is correctly rounded as MXNet's
    CPU kernel (C's ``expf``) gives it: NumPy's float32 ``exp`` can be one ulp off (``exp(1)`` is 2.718282,
    MXNet's 2.7182817; MXNet's test_autograd.test_gradient checks that value to 1e-7)."""
    if isinstance(x, _np.ndarray) and x.dtype == _np.float32:  # host arrays: rounded as MXNet's CPU kernel
        return _np.exp(x, dtype=_np.float64).astype(_np.float32)
    return xp.exp(x)

# name: (forward, grad(xp, x, y, og), deps, ufunc name for the direct-write path, aliases)
UNARY_OPS = {
    "abs": (lambda xp, x: xp.abs(x), lambda xp, x, y, g: g * xp.sign(x), "in", "abs", ()),
    "sign": (lambda xp, x: xp.sign(x), _zero, "", "sign", ()),
    "round": (lambda xp, x: xp.where(x >= 0, xp.floor(x + 0.5), xp.ceil(x - 0.5)), _zero, "", None, ()),
    "rint": (lambda xp, x: xp.rint(x), _zero, "", "rint", ()),
    "fix": (lambda xp, x: xp.trunc(x), _zero, "", "trunc", ()),
    "ceil": (lambda xp, x: xp.ceil(x), _zero, "", "ceil", ()),
    "floor": (lambda xp, x: xp.floor(x), _zero, "", "floor", ()),
    "trunc": (lambda xp, x: xp.trunc(x), _zero, "", "trunc", ()),
    "sqrt": (lambda xp, x: xp.sqrt(x), lambda xp, x, y, g: g / (2 * y), "out", "sqrt", ()),
    "rsqrt": (lambda xp, x: 1 / xp.sqrt(x), lambda xp, x, y, g: -0.5 * g * y * y * y, "out", None, ()),
    "cbrt": (lambda xp, x: xp.cbrt(x), lambda xp, x, y, g: g / (3 * y * y), "out", "cbrt", ()),
    "rcbrt": (lambda xp, x: 1 / xp.cbrt(x), lambda xp, x, y, g: -g * y ** 4 / 3, "out", None, ()),
    "square": (lambda xp, x: xp.square(x), lambda xp, x, y, g: 2 * g * x, "in", "square", ()),
    "reciprocal": (lambda xp, x: xp.reciprocal(x), lambda xp, x, y, g: -g * y * y, "out", "reciprocal", ()),
    "exp": (lambda xp, x: _exp(xp, x), lambda xp, x, y, g: g * y, "out", None, ()),
    "log": (lambda xp, x: xp.log(x), lambda xp, x, y, g: g / x, "in", "log", ()),
    "log2": (lambda xp, x: xp.log2(x), lambda xp, x, y, g: g / (x * _LN2), "in", "log2", ()),
    "log10": (lambda xp, x: xp.log10(x), lambda xp, x, y, g: g / (x * _LN10), "in", "log10", ()),
    "log1p": (lambda xp, x: xp.log1p(x), lambda xp, x, y, g: g / (1 + x), "in", "log1p", ()),
    "expm1": (lambda xp, x: xp.expm1(x), lambda xp, x, y, g: g * (y + 1), "out", "expm1", ()),
    "sin": (lambda xp, x: xp.sin(x), lambda xp, x, y, g: g * xp.cos(x), "in", "sin", ()),
    "cos": (lambda xp, x: xp.cos(x), lambda xp, x, y, g: -g * xp.sin(x), "in", "cos", ()),
    "tan": (lambda xp, x: xp.tan(x), lambda xp, x, y, g: g * (1 + y * y), "out", "tan", ()),
    "arcsin": (lambda xp, x: xp.arcsin(x), lambda xp, x, y, g: g / xp.sqrt(1 - x * x), "in", "arcsin", ()),
    "arccos": (lambda xp, x: xp.arccos(x), lambda xp, x, y, g: -g / xp.sqrt(1 - x * x), "in", "arccos", ()),
    "arctan": (lambda xp, x: xp.arctan(x), lambda xp, x, y, g: g / (1 + x * x), "in", "arctan", ()),
    "sinh": (lambda xp, x: xp.sinh(x), lambda xp, x, y, g: g * xp.cosh(x), "in", "sinh", ()),
    "cosh": (lambda xp, x: xp.cosh(x), lambda xp, x, y, g: g * xp.sinh(x), "in", "cosh", ()),
    "tanh": (lambda xp, x: xp.tanh(x), lambda xp, x, y, g: g * (1 - y * y), "out", "tanh", ()),
    "arcsinh": (lambda xp, x: xp.arcsinh(x), lambda xp, x, y, g: g / xp.sqrt(x * x + 1), "in", "arcsinh", ()),
    "arccosh": (lambda xp, x: xp.arccosh(x), lambda xp, x, y, g: g / xp.sqrt(x * x - 1), "in", "arccosh", ()),
    "arctanh": (lambda xp, x: xp.arctanh(x), lambda xp, x, y, g: g / (1 - x * x), "in", "arctanh", ()),
    "degrees": (lambda xp, x: xp.degrees(x), lambda xp, x, y, g: g * (180 / math.pi), "", "degrees", ()),
    "radians": (lambda xp, x: xp.radians(x), lambda xp, x, y, g: g * (math.pi / 180), "", "radians", ()),
    "sigmoid": (lambda xp, x: 1 / (1 + xp.exp(-x)), lambda xp, x, y, g: g * y * (1 - y), "out", None, ()),
    "relu": (lambda xp, x: xp.maximum(x, 0), lambda xp, x, y, g: g * (y > 0), "out", None, ()),
    "softsign": (lambda xp, x: x / (1 + xp.abs(x)), lambda xp, x, y, g: g / xp.square(1 + xp.abs(x)), "in", None, ()),
    "negative": (lambda xp, x: xp.negative(x), lambda xp, x, y, g: -g, "", "negative", ()),
    "_copy": (lambda xp, x: x.copy(), lambda xp, x, y, g: g, "", None, ("identity", "_copyto")),
    "zeros_like": (lambda xp, x: xp.zeros_like(x), _zero, "", None, ()),
    "ones_like": (lambda xp, x: xp.ones_like(x), _zero, "", None, ()),
    "logical_not": (lambda xp, x: (x == 0).astype(x.dtype), _zero, "", None, ()),
}


def _make_bwd(grad, deps):
    def bwd(xp, p, og, ins, outs):
        return [grad(xp, ins[0] if "in" in deps else None, outs[0] if "out" in deps else None, og[0])]

    return bwd


def _fwd1(f):
    return lambda xp, p, x: f(xp, x)


# MXNet's zero ops: the gradient passes prune these instead of running their backward
_ZERO_GRADIENT = {"sign", "round", "rint", "fix", "ceil", "floor", "trunc", "zeros_like", "ones_like"}


class LikeParam(OpParam):
    """zeros_like/ones_like: MXNet 1.9.1 registers no params for them and so accepts any keyword,
    ``dtype`` among them, and ignores it (the result keeps the input's dtype)."""

    dtype: str | None = Field(None, description="accepted and ignored, as in MXNet 1.9.1: the input's dtype is kept")


def _copy_gradient(nd, prop, og, ins, outs):
    return [og[0]]


for _name, (_f, _g, _deps, _uf, _aliases) in UNARY_OPS.items():
    _d = "og," + _deps if _deps else "og"
    defop(_name, fwd=_fwd1(_f), bwd=_make_bwd(_g, _deps), deps=_d, aliases=_aliases, base=_UnaryProperty,
          **({"param": LikeParam} if _name in ("zeros_like", "ones_like") else {}),
          inplace=True, ufunc_name=_uf, doc=f"Elementwise {_name.strip('_')} of the input.",
          zero_gradient=_name in _ZERO_GRADIENT, xp_gradient=_name != "_copy",
          recorded_gradient=_copy_gradient if _name == "_copy" else None)


class ClipParam(OpParam):
    a_min: float
    a_max: float


def _clip_gradient(nd, prop, og, ins, outs):
    p, x = prop.params, ins[0]
    return [og[0] * ((x >= p.a_min) * (x <= p.a_max))]


defop("clip", param=ClipParam, base=_UnaryProperty, inplace=True, deps="og,in",
      recorded_gradient=_clip_gradient,
      fwd=lambda xp, p, x: xp.clip(x, p.a_min, p.a_max),
      bwd=lambda xp, p, og, ins, outs: [og[0] * ((ins[0] >= p.a_min) & (ins[0] <= p.a_max))],
      doc="Clip values into [a_min, a_max]; the gradient passes only inside the range.")
