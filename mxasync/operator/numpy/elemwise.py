"""Elementwise NumPy-interface ops: ``_npi_<ufunc>`` (unary) and the binary ones with broadcasting.

Dtypes follow MXNet 1.9's NumPy interface, not NumPy's: a unary function keeps its input's
dtype (``np.sqrt`` of int32 is int32), a binary one of two dtypes takes the float one when
one is float (int32 + float16 is float16) and float32 when an integer meets a boolean,
a boolean meets another dtype as that dtype, a Python scalar keeps the array's dtype
(int32 + 2.5 is int32; a boolean array gives int64), and ``true_divide`` of integers gives
float32.

>>> from mxasync.operator import get_op
>>> get_op("_npi_add").prepare().infer_type(["int32", "float16"])[1]
['float16']
>>> get_op("_npi_add").prepare(scalar=2.5).infer_type(["int32"])[1]
['int32']
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ._npop import npop, unbroadcast

__all__ = ["UNARY", "BINARY", "COMPARE", "mx_promote"]


def _is_float(dt) -> bool:
    return np.dtype(dt).kind in "fc"


def mx_promote(a, b, default="float32"):
    """MXNet 1.9's result dtype of a binary NumPy-interface op on dtypes ``a`` and ``b``
    (recorded from MXNet in tests/numpy/fixtures/promotion.json)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    fa, fb = a.kind == "f", b.kind == "f"
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    return np.promote_types(a, b)


# -- unary: name -> (numpy function, gradient(xp, x, out, og) or None for a zero gradient) -----------
UNARY = {
    "abs": (np.abs, lambda xp, x, y, g: g * xp.sign(x)),
    "absolute": (np.absolute, lambda xp, x, y, g: g * xp.sign(x)),
    "fabs": (np.fabs, lambda xp, x, y, g: g * xp.sign(x)),
    "negative": (np.negative, lambda xp, x, y, g: -g),
    "positive": (np.positive, lambda xp, x, y, g: g),
    "reciprocal": (np.reciprocal, lambda xp, x, y, g: -g * y * y),
    "square": (np.square, lambda xp, x, y, g: 2 * g * x),
    "sqrt": (np.sqrt, lambda xp, x, y, g: g / (2 * y)),
    "cbrt": (np.cbrt, lambda xp, x, y, g: g / (3 * y * y)),
    "exp": (np.exp, lambda xp, x, y, g: g * y),
    "expm1": (np.expm1, lambda xp, x, y, g: g * (y + 1)),
    "log": (np.log, lambda xp, x, y, g: g / x),
    "log10": (np.log10, lambda xp, x, y, g: g / (x * math.log(10))),
    "log2": (np.log2, lambda xp, x, y, g: g / (x * math.log(2))),
    "log1p": (np.log1p, lambda xp, x, y, g: g / (1 + x)),
    "sin": (np.sin, lambda xp, x, y, g: g * xp.cos(x)),
    "cos": (np.cos, lambda xp, x, y, g: -g * xp.sin(x)),
    "tan": (np.tan, lambda xp, x, y, g: g * (1 + y * y)),
    "arcsin": (np.arcsin, lambda xp, x, y, g: g / xp.sqrt(1 - x * x)),
    "arccos": (np.arccos, lambda xp, x, y, g: -g / xp.sqrt(1 - x * x)),
    "arctan": (np.arctan, lambda xp, x, y, g: g / (1 + x * x)),
    "sinh": (np.sinh, lambda xp, x, y, g: g * xp.cosh(x)),
    "cosh": (np.cosh, lambda xp, x, y, g: g * xp.sinh(x)),
    "tanh": (np.tanh, lambda xp, x, y, g: g * (1 - y * y)),
    "arcsinh": (np.arcsinh, lambda xp, x, y, g: g / xp.sqrt(x * x + 1)),
    "arccosh": (np.arccosh, lambda xp, x, y, g: g / xp.sqrt(x * x - 1)),
    "arctanh": (np.arctanh, lambda xp, x, y, g: g / (1 - x * x)),
    "degrees": (np.degrees, lambda xp, x, y, g: g * (180 / math.pi)),
    "rad2deg": (np.rad2deg, lambda xp, x, y, g: g * (180 / math.pi)),
    "radians": (np.radians, lambda xp, x, y, g: g * (math.pi / 180)),
    "deg2rad": (np.deg2rad, lambda xp, x, y, g: g * (math.pi / 180)),
    "sign": (np.sign, None),
    "rint": (np.rint, None),
    "ceil": (np.ceil, None),
    "floor": (np.floor, None),
    "trunc": (np.trunc, None),
    "fix": (np.fix, None),
}
#: unary functions with a boolean result (no gradient)
UNARY_BOOL = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "isposinf": np.isposinf,
              "isneginf": np.isneginf, "signbit": np.signbit, "logical_not": np.logical_not}
#: unary functions on integers and booleans (no gradient)
UNARY_INT = {"bitwise_not": np.bitwise_not, "invert": np.invert}


def _unary_kernel(fn):
    def fwd(xp, p, x):
        f = getattr(xp, fn.__name__, fn)
        y = f(x)
        if y.dtype != x.dtype and x.dtype.kind != "b":
            y = y.astype(x.dtype)
        elif x.dtype.kind == "b" and y.dtype.kind != "b":
            y = y.astype(np.float32)
        return y
    return fwd


def _unary_grad(g):
    def bwd(xp, p, og, ins, outs):
        if g is None:
            return [None]
        return [g(xp, ins[0], outs[0], og[0])]
    return bwd


for _name, (_fn, _grad) in UNARY.items():
    npop(f"_npi_{_name}", _unary_kernel(_fn), grad=_unary_grad(_grad), arguments=("x",),
         deps="og,in,out", doc=f"NumPy's ``{_name}`` elementwise; the input's dtype is kept (MXNet 1.9).")

for _name, _fn in {**UNARY_BOOL, **UNARY_INT}.items():
    def _k(xp, p, x, _f=_fn):
        return getattr(xp, _f.__name__)(x)
    npop(f"_npi_{_name}", _k, grad=lambda xp, p, og, ins, outs: [None], arguments=("x",),
         doc=f"NumPy's ``{_name}`` elementwise.")


# -- binary -----------------------------------------------------------------------------------------
def _pow_grad_b(xp, a, b, y, g):
    with np.errstate(all="ignore"):
        return g * y * xp.log(xp.where(a > 0, a, 1))


BINARY = {
    # name: (numpy function, grad_a(xp, a, b, out, og), grad_b(...))
    "add": (np.add, lambda xp, a, b, y, g: g, lambda xp, a, b, y, g: g),
    "subtract": (np.subtract, lambda xp, a, b, y, g: g, lambda xp, a, b, y, g: -g),
    "multiply": (np.multiply, lambda xp, a, b, y, g: g * b, lambda xp, a, b, y, g: g * a),
    "true_divide": (np.true_divide, lambda xp, a, b, y, g: g / b, lambda xp, a, b, y, g: -g * a / (b * b)),
    "mod": (np.mod, lambda xp, a, b, y, g: g, lambda xp, a, b, y, g: -g * xp.floor(a / b)),
    # NumPy's: an integer result for integers (x // 0 is 0 there, with a warning), inf for floats
    "floor_divide": (np.floor_divide, lambda xp, a, b, y, g: xp.zeros_like(g), lambda xp, a, b, y, g: xp.zeros_like(g)),
    "fmod": (np.fmod, lambda xp, a, b, y, g: g, lambda xp, a, b, y, g: -g * xp.trunc(a / b)),
    "power": (np.power, lambda xp, a, b, y, g: g * b * xp.power(a, b - 1), _pow_grad_b),
    "maximum": (np.maximum, lambda xp, a, b, y, g: g * (a >= b), lambda xp, a, b, y, g: g * (a < b)),
    "minimum": (np.minimum, lambda xp, a, b, y, g: g * (a <= b), lambda xp, a, b, y, g: g * (a > b)),
    "fmax": (np.fmax, lambda xp, a, b, y, g: g * (a >= b), lambda xp, a, b, y, g: g * (a < b)),
    "fmin": (np.fmin, lambda xp, a, b, y, g: g * (a <= b), lambda xp, a, b, y, g: g * (a > b)),
    "hypot": (np.hypot, lambda xp, a, b, y, g: g * a / y, lambda xp, a, b, y, g: g * b / y),
    "arctan2": (np.arctan2, lambda xp, a, b, y, g: g * b / (a * a + b * b),
                lambda xp, a, b, y, g: -g * a / (a * a + b * b)),
    "copysign": (np.copysign, lambda xp, a, b, y, g: g * xp.sign(a) * xp.where(xp.signbit(b), -1, 1), None),
    "ldexp": (np.ldexp, lambda xp, a, b, y, g: g * xp.power(2.0, b), lambda xp, a, b, y, g: g * y * math.log(2)),
    "float_power": (np.float_power, lambda xp, a, b, y, g: g * b * xp.power(a, b - 1), _pow_grad_b),
    "lcm": (np.lcm, None, None),
    "gcd": (np.gcd, None, None),
    "bitwise_and": (np.bitwise_and, None, None),
    "bitwise_or": (np.bitwise_or, None, None),
    "bitwise_xor": (np.bitwise_xor, None, None),
}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
           "less": np.less, "less_equal": np.less_equal, "logical_and": np.logical_and,
           "logical_or": np.logical_or, "logical_xor": np.logical_xor}
_INT_ONLY = {"lcm", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor"}

_BIN_PARAMS = {"scalar": (Optional[float], None), "scalar_is_int": (bool, False), "reverse": (bool, False),
               "default_float": (str, "float32")}


def _operands(p, ins):
    """(a, b) of a binary op: two arrays, or an array and the scalar param (``reverse``: scalar first)."""
    if p.scalar is None:
        return ins[0], ins[1]
    s = int(p.scalar) if p.scalar_is_int else p.scalar
    return (s, ins[0]) if p.reverse else (ins[0], s)


def _binary_kernel(name, fn, compare=False):
    fname = fn.__name__

    def fwd(xp, p, *ins):
        a, b = _operands(p, ins)
        f = getattr(xp, fname)
        if compare:
            return f(a, b)
        if p.scalar is None:
            out_t = mx_promote(a.dtype, b.dtype, p.default_float)
            if name == "true_divide" and not _is_float(out_t):
                out_t = np.dtype(p.default_float)
            if name in _INT_ONLY:
                return f(a, b).astype(np.promote_types(a.dtype, b.dtype))
            if name == "ldexp":
                return (a * xp.power(2.0, b)).astype(out_t, copy=False)
            if a.dtype.kind == "b" and b.dtype.kind == "b":  # NumPy's boolean arithmetic, then MXNet's dtype
                return xp.asarray(f(a, b)).astype(out_t, copy=False)
            ca = a if a.dtype == out_t or a.dtype.kind == "b" and out_t.kind != "f" else a.astype(out_t)
            cb = b if b.dtype == out_t or b.dtype.kind == "b" and out_t.kind != "f" else b.astype(out_t)
            with np.errstate(all="ignore"):  # as the scalar form: no warning from an engine thread
                return f(ca, cb).astype(out_t, copy=False)
        arr = ins[0]
        out_t = arr.dtype
        if out_t.kind == "b" and name not in _INT_ONLY:
            out_t = np.dtype(np.int64)
        if name == "true_divide" and not _is_float(out_t):
            out_t = np.dtype(p.default_float)
        with np.errstate(all="ignore"):
            res = a * xp.power(2.0, b) if name == "ldexp" else f(a, b)
        return xp.asarray(res).astype(out_t, copy=False)

    return fwd


def _binary_grad(ga, gb):
    def bwd(xp, p, og, ins, outs):
        a, b = _operands(p, ins)
        g, y = og[0], outs[0]
        with np.errstate(all="ignore"):
            if p.scalar is not None:
                arr_is_a = not p.reverse
                gfn = ga if arr_is_a else gb
                if gfn is None:
                    return [None]
                return [gfn(xp, a, b, y, g).astype(ins[0].dtype, copy=False)]
            res = []
            for gfn, x in ((ga, a), (gb, b)):
                if gfn is None or x.dtype.kind not in "fc":
                    res.append(None)
                else:
                    res.append(unbroadcast(xp, xp.asarray(gfn(xp, a, b, y, g)), x.shape).astype(x.dtype, copy=False))
            return res
    return bwd


def _bin_args(p):
    return ["lhs"] if p.scalar is not None else ["lhs", "rhs"]


for _name, (_fn, _ga, _gb) in BINARY.items():
    npop(f"_npi_{_name}", _binary_kernel(_name, _fn), params=_BIN_PARAMS, grad=_binary_grad(_ga, _gb),
         args=_bin_args, arguments=("lhs", "rhs"),
         doc=f"NumPy's ``{_name}`` with broadcasting, or with a scalar (``scalar``, ``reverse``).")

for _name, _fn in COMPARE.items():
    npop(f"_npi_{_name}", _binary_kernel(_name, _fn, compare=True), params=_BIN_PARAMS,
         grad=lambda xp, p, og, ins, outs: [None] * len(ins), args=_bin_args, arguments=("lhs", "rhs"),
         doc=f"NumPy's ``{_name}`` with broadcasting (a boolean result).")


def _around(xp, p, x):
    return xp.around(x, p.decimals).astype(x.dtype, copy=False)


npop("_npi_around", _around, params={"decimals": (int, 0)}, grad=lambda xp, p, og, ins, outs: [None],
     arguments=("x",), doc="NumPy's ``around`` (a zero gradient).")
