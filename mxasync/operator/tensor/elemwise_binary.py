"""Binary ops: ``elemwise_*`` (same shapes), ``broadcast_*`` (NumPy broadcasting) and ``_*_scalar``.

One row per operation gives the forward and both gradients; the three op
kinds are generated from it.  ``elemwise_add`` on same-shape inputs is the
imperative hot path: shape inference is one tuple compare and forward is
``xp.add(a, b, out=c)``.

>>> from mxasync.operator import get_op
>>> get_op("broadcast_mul").prepare().infer_shape([(2, 1, 3), (4, 1)])
([(2, 1, 3), (4, 1)], [(2, 4, 3)], [])
>>> get_op("_rminus_scalar").prepare(scalar="1").params.scalar
1.0
"""

from __future__ import annotations

import numpy as _np
import numpy as np

from .._util import broadcast_shape, unbroadcast
from ..base import WRITE_INPLACE, WRITE_TO
from ..functional import FunctionalOperator, FunctionalProperty, defop
from ..params import OpParam
from .elemwise_unary import SameAsInputProperty, UfuncOperator

__all__ = ["BINARY_OPS", "SCALAR_OPS"]


def _integer(x) -> bool:
    # an NDArray (recorded higher-order gradients) gives its dtype as a numpy type, not a np.dtype
    return _np.dtype(getattr(x, "dtype", type(x))).kind in "iu"


def _floor_div(xp, a, b):
    """``floor(a / b)`` for mod's gradient; integers stay integers (0 where b is 0), so a zero head
    gradient gives a zero gradient rather than 0 * inf cast to int."""
    if _integer(a) and _integer(b):
        zero = b == 0
        return xp.where(zero, 0, a // xp.where(zero, 1, b))
    return xp.floor(a / b)


def _zeros(xp, a, b, y, g):
    return None, None


def _cmp(f):
    return lambda xp, a, b: f(xp, a, b).astype(a.dtype if hasattr(a, "dtype") else b.dtype)


# name: (forward(xp, a, b), grads(xp, a, b, y, og) -> (ga, gb), ufunc for direct writes, elemwise aliases, broadcast aliases)
BINARY_OPS = {
    "add": (lambda xp, a, b: a + b, lambda xp, a, b, y, g: (g, g), "add",
            ("_plus", "_add", "_Plus", "_grad_add"), ("broadcast_plus",)),
    "sub": (lambda xp, a, b: a - b, lambda xp, a, b, y, g: (g, -g), "subtract",
            ("_minus", "_sub", "_Minus"), ("broadcast_minus",)),
    "mul": (lambda xp, a, b: a * b, lambda xp, a, b, y, g: (g * b, g * a), "multiply", ("_mul", "_Mul"), ()),
    "div": (lambda xp, a, b: a / b, lambda xp, a, b, y, g: (g / b, -g * a / (b * b)), "divide",
            ("_div", "_Div"), ()),
    "mod": (lambda xp, a, b: xp.mod(a, b), lambda xp, a, b, y, g: (g, -g * _floor_div(xp, a, b)), "mod",
            ("_mod", "_Mod"), ()),
    "power": (lambda xp, a, b: xp.power(a, b),
              lambda xp, a, b, y, g: (g * b * xp.power(a, b - 1), g * y * xp.log(a)), "power",
              ("_power", "_Power"), ()),
    "maximum": (lambda xp, a, b: xp.maximum(a, b), lambda xp, a, b, y, g: (g * (a >= b), g * (a < b)), "maximum",
                ("_maximum", "_Maximum"), ()),
    "minimum": (lambda xp, a, b: xp.minimum(a, b), lambda xp, a, b, y, g: (g * (a <= b), g * (a > b)), "minimum",
                ("_minimum", "_Minimum"), ()),
    "hypot": (lambda xp, a, b: xp.hypot(a, b), lambda xp, a, b, y, g: (g * a / y, g * b / y), "hypot",
              ("_hypot", "_Hypot"), ()),
    "equal": (_cmp(lambda xp, a, b: a == b), _zeros, None, ("_equal", "_Equal"), ()),
    "not_equal": (_cmp(lambda xp, a, b: a != b), _zeros, None, ("_not_equal", "_Not_Equal"), ()),
    "greater": (_cmp(lambda xp, a, b: a > b), _zeros, None, ("_greater", "_Greater"), ()),
    "greater_equal": (_cmp(lambda xp, a, b: a >= b), _zeros, None, ("_greater_equal", "_Greater_Equal"), ()),
    "lesser": (_cmp(lambda xp, a, b: a < b), _zeros, None, ("_lesser", "_Lesser"), ()),
    "lesser_equal": (_cmp(lambda xp, a, b: a <= b), _zeros, None, ("_lesser_equal", "_Lesser_Equal"), ()),
    "logical_and": (_cmp(lambda xp, a, b: (a != 0) & (b != 0)), _zeros, None, ("_logical_and", "_Logical_And"), ()),
    "logical_or": (_cmp(lambda xp, a, b: (a != 0) | (b != 0)), _zeros, None, ("_logical_or", "_Logical_Or"), ()),
    "logical_xor": (_cmp(lambda xp, a, b: (a != 0) ^ (b != 0)), _zeros, None, ("_logical_xor", "_Logical_Xor"), ()),
}

# MXNet names the same-shape ops elemwise_add/sub/mul/div and _<name> for the rest
_ELEMWISE_NAME = {k: f"elemwise_{k}" if k in ("add", "sub", "mul", "div") else f"_{k}" for k in BINARY_OPS}


class _BinaryProperty(FunctionalProperty):
    arguments = ("lhs", "rhs")
    ufunc_name: str | None = None
    broadcast = False

    def infer_shape(self, in_shapes):
        a, b = in_shapes
        if a == b:
            return [a, a], [a], []
        if a is None or b is None:
            if self.broadcast:
                return [a, b], [None], []
            s = a if b is None else b
            return [s, s], [s], []
        if not self.broadcast:
            raise self.error(f"lhs and rhs must have the same shape, got lhs {a} and rhs {b} "
                             "(use broadcast_* for broadcasting)")
        return [a, b], [broadcast_shape(self, a, b)], []

    def infer_type(self, in_types):
        a, b = in_types
        if a == b or b is None:
            return [a, a], [a], []
        if a is None:
            return [b, b], [b], []
        raise self.error(f"lhs has dtype {a} but rhs has dtype {b}")

    def create_operator(self, ctx):
        op = super().create_operator(ctx)
        if self.ufunc_name is None or op.fwd is not type(self).fwd:
            return op
        fast = UfuncOperator(self, op.xp, op.fwd, op.bwd)
        fast.ufunc = getattr(op.xp, self.ufunc_name)
        return fast


def _fwd2(f):
    return lambda xp, p, a, b: f(xp, a, b)


def _bwd2(grad, reduce: bool):
    def bwd(xp, p, og, ins, outs):
        a, b = ins
        ga, gb = grad(xp, a, b, outs[0], og[0])
        if reduce:
            ga = None if ga is None else unbroadcast(xp, xp.broadcast_to(ga, outs[0].shape), a.shape)
            gb = None if gb is None else unbroadcast(xp, xp.broadcast_to(gb, outs[0].shape), b.shape)
        return [ga, gb]

    return bwd


# MXNet's zero ops among these (the comparisons of same-shape arrays): the gradient passes prune them
_ZERO_GRADIENT = {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"}

for _k, (_f, _g, _uf, _ealias, _balias) in BINARY_OPS.items():
    _deps = "og" if _k in ("add", "sub") else "og,in,out"
    defop(_ELEMWISE_NAME[_k], fwd=_fwd2(_f), bwd=_bwd2(_g, False), base=_BinaryProperty, deps=_deps,
          arguments=("lhs", "rhs"), aliases=_ealias, ufunc_name=_uf, inplace=_k in ("add", "sub", "mul"),
          zero_gradient=_k in _ZERO_GRADIENT, xp_gradient=True,
          doc=f"Elementwise {_k} of two arrays of the same shape.")
    defop(f"broadcast_{_k}", fwd=_fwd2(_f), bwd=_bwd2(_g, True), base=_BinaryProperty, deps="og,in,out",
          arguments=("lhs", "rhs"), aliases=_balias, ufunc_name=_uf, broadcast=True, xp_gradient=True,
          doc=f"Elementwise {_k} with NumPy broadcasting.")


class ScalarParam(OpParam):
    scalar: float = 1.0
    is_int: bool = True


# scalar op name: (forward(xp, x, s), grad(xp, x, s, y, og)); "_r*" ops put the scalar on the left
SCALAR_OPS = {
    "_plus_scalar": (lambda xp, x, s: x + s, lambda xp, x, s, y, g: g),
    "_minus_scalar": (lambda xp, x, s: x - s, lambda xp, x, s, y, g: g),
    "_rminus_scalar": (lambda xp, x, s: s - x, lambda xp, x, s, y, g: -g),
    "_mul_scalar": (lambda xp, x, s: x * s, lambda xp, x, s, y, g: g * s),
    "_div_scalar": (lambda xp, x, s: x / s, lambda xp, x, s, y, g: g / s),
    "_rdiv_scalar": (lambda xp, x, s: s / x, lambda xp, x, s, y, g: -g * y / x),
    "_mod_scalar": (lambda xp, x, s: xp.mod(x, s), lambda xp, x, s, y, g: g),
    "_rmod_scalar": (lambda xp, x, s: xp.mod(s, x), lambda xp, x, s, y, g: -g * _floor_div(xp, s, x)),
    "_power_scalar": (lambda xp, x, s: xp.power(x, s), lambda xp, x, s, y, g: g * s * xp.power(x, s - 1)),
    "_rpower_scalar": (lambda xp, x, s: xp.power(s, x), lambda xp, x, s, y, g: g * y * xp.log(s)),
    "_maximum_scalar": (lambda xp, x, s: xp.maximum(x, s), lambda xp, x, s, y, g: g * (x >= s)),
    "_minimum_scalar": (lambda xp, x, s: xp.minimum(x, s), lambda xp, x, s, y, g: g * (x <= s)),
    "_hypot_scalar": (lambda xp, x, s: xp.hypot(x, s), lambda xp, x, s, y, g: g * x / y),
    "_equal_scalar": (lambda xp, x, s: x == s, None),
    "_not_equal_scalar": (lambda xp, x, s: x != s, None),
    "_greater_scalar": (lambda xp, x, s: x > s, None),
    "_greater_equal_scalar": (lambda xp, x, s: x >= s, None),
    "_lesser_scalar": (lambda xp, x, s: x < s, None),
    "_lesser_equal_scalar": (lambda xp, x, s: x <= s, None),
    "_logical_and_scalar": (lambda xp, x, s: (x != 0) & (s != 0), None),
    "_logical_or_scalar": (lambda xp, x, s: (x != 0) | (s != 0), None),
    "_logical_xor_scalar": (lambda xp, x, s: (x != 0) ^ (s != 0), None),
}
_SCALAR_ALIASES = {"_plus_scalar": ("_PlusScalar",), "_minus_scalar": ("_MinusScalar",),
                   "_rminus_scalar": ("_RMinusScalar",), "_mul_scalar": ("_MulScalar",),
                   "_div_scalar": ("_DivScalar",), "_rdiv_scalar": ("_RDivScalar",),
                   "_power_scalar": ("_PowerScalar",), "_rpower_scalar": ("_RPowerScalar",),
                   "_maximum_scalar": ("_MaximumScalar",), "_minimum_scalar": ("_MinimumScalar",),
                   # MXNet's legacy names (old symbol JSON files use them)
                   "_mod_scalar": ("_ModScalar",), "_rmod_scalar": ("_RModScalar",),
                   "_hypot_scalar": ("_HypotScalar",), "_equal_scalar": ("_EqualScalar",),
                   "_not_equal_scalar": ("_NotEqualScalar",), "_greater_scalar": ("_GreaterScalar",),
                   "_greater_equal_scalar": ("_GreaterEqualScalar",), "_lesser_scalar": ("_LesserScalar",),
                   "_lesser_equal_scalar": ("_LesserEqualScalar",), "_logical_and_scalar": ("_LogicalAndScalar",),
                   "_logical_or_scalar": ("_LogicalOrScalar",), "_logical_xor_scalar": ("_LogicalXorScalar",)}


# the scalar ops a ufunc computes straight into the output: name -> (ufunc, scalar on the left)
_SCALAR_UFUNCS = {"_plus_scalar": ("add", False), "_minus_scalar": ("subtract", False),
                  "_rminus_scalar": ("subtract", True), "_mul_scalar": ("multiply", False),
                  "_div_scalar": ("true_divide", False), "_rdiv_scalar": ("true_divide", True),
                  "_power_scalar": ("power", False), "_rpower_scalar": ("power", True),
                  "_maximum_scalar": ("maximum", False), "_minimum_scalar": ("minimum", False),
                  "_hypot_scalar": ("hypot", False)}


class _ScalarOperator(FunctionalOperator):
    """Floating-point arrays: one ufunc call into the output (no result array copied in)."""

    __slots__ = ("ufunc", "scalar_first")

    def forward(self, op_ctx, in_data, req, out_data, aux):
        x, r = in_data[0], req[0]
        if (r is WRITE_TO or r is WRITE_INPLACE) and x.dtype.kind == "f":
            s = _scalar_as(x, self.prop.params.scalar)
            if self.scalar_first:
                self.ufunc(s, x, out=out_data[0])
            else:
                self.ufunc(x, s, out=out_data[0])
        else:
            FunctionalOperator.forward(self, op_ctx, in_data, req, out_data, aux)


class _ScalarProperty(SameAsInputProperty):
    def create_operator(self, ctx):
        op = super().create_operator(ctx)
        spec = _SCALAR_UFUNCS.get(self.op_name)
        if spec is None or type(op) is not FunctionalOperator or op.fwd is not type(self).fwd:
            return op
        fast = _ScalarOperator(self, op.xp, op.fwd, op.bwd)
        fast.ufunc, fast.scalar_first = getattr(op.xp, spec[0]), spec[1]
        return fast


_TYPED_SCALARS: dict = {}


def _scalar_as(x, scalar: float):
    """MXNet converts the scalar to the array's dtype first: on int32, ``u * 1.9`` is ``u * 1``
    and ``u == 1.5`` is ``u == 1`` (a C cast: toward zero, wrapping for unsigned)."""
    if x.dtype.kind not in "iub":
        # the array's own scalar type, made once: numpy 2 takes a Python float by a slower path
        # (1.2 vs 0.7 µs on 4 elements) to the same result (a weak Python scalar is cast anyway)
        key = (scalar, x.dtype)
        typed = _TYPED_SCALARS.get(key)
        if typed is None:
            if len(_TYPED_SCALARS) > 4096:
                _TYPED_SCALARS.clear()
            with np.errstate(all="ignore"):
                typed = _TYPED_SCALARS[key] = x.dtype.type(scalar)
        return typed
    with np.errstate(all="ignore"):
        return np.asarray(scalar, dtype=np.float64).astype(x.dtype)[()]


def _sfwd(f):
    def fwd(xp, p, x):
        y = f(xp, x, _scalar_as(x, p.scalar))
        return y if y.dtype == x.dtype else y.astype(x.dtype)

    return fwd


def _sbwd(g):
    if g is None:
        return lambda xp, p, og, ins, outs: [None]
    return lambda xp, p, og, ins, outs: [g(xp, ins[0], p.scalar, outs[0], og[0])]


for _k, (_f, _g) in SCALAR_OPS.items():
    defop(_k, fwd=_sfwd(_f), bwd=_sbwd(_g), param=ScalarParam, base=_ScalarProperty, inplace=True,
          xp_gradient=_g is not None,
          aliases=_SCALAR_ALIASES.get(_k, ()), deps="og,in,out",
          doc=f"{_k.strip('_').replace('_', ' ')} of an array and ``scalar``.")
