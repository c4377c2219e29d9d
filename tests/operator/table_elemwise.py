"""Table rows: unary, binary, scalar and reduction ops."""

from __future__ import annotations

import numpy as np
from cases import Case, away, distinct, uniform

S1 = [((2, 3),), ((5,),)]
S2 = [((2, 3), (2, 3)), ((4,), (4,))]
SB = [((2, 1, 3), (4, 1)), ((3,), (2, 3)), ((2, 3), (2, 3))]

pos = uniform(0.5, 2.0)
unit = uniform(-0.8, 0.8)


def _round(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


UNARY = {
    "abs": (np.abs, away()), "sign": (np.sign, away()), "round": (_round, None), "rint": (np.rint, None),
    "fix": (np.trunc, None), "ceil": (np.ceil, None), "floor": (np.floor, None), "trunc": (np.trunc, None),
    "sqrt": (np.sqrt, pos), "rsqrt": (lambda x: 1 / np.sqrt(x), pos), "cbrt": (np.cbrt, pos),
    "rcbrt": (lambda x: 1 / np.cbrt(x), pos), "square": (np.square, None), "reciprocal": (np.reciprocal, pos),
    "exp": (np.exp, None), "log": (np.log, pos), "log2": (np.log2, pos), "log10": (np.log10, pos),
    "log1p": (np.log1p, pos), "expm1": (np.expm1, None), "sin": (np.sin, None), "cos": (np.cos, None),
    "tan": (np.tan, unit), "arcsin": (np.arcsin, unit), "arccos": (np.arccos, unit), "arctan": (np.arctan, None),
    "sinh": (np.sinh, None), "cosh": (np.cosh, None), "tanh": (np.tanh, None), "arcsinh": (np.arcsinh, None),
    "arccosh": (np.arccosh, uniform(1.5, 3)), "arctanh": (np.arctanh, unit), "degrees": (np.degrees, None),
    "radians": (np.radians, None), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), None),
    "relu": (lambda x: np.maximum(x, 0), away()), "softsign": (lambda x: x / (1 + np.abs(x)), away()),
    "negative": (np.negative, None), "_copy": (np.copy, None), "zeros_like": (np.zeros_like, None),
    "ones_like": (np.ones_like, None), "logical_not": (lambda x: (x == 0).astype(x.dtype), None),
}
_ZERO_GRAD = {"sign", "round", "rint", "fix", "ceil", "floor", "trunc", "zeros_like", "ones_like", "logical_not"}

CASES = [Case(op, S1, ref=lambda x, f=f: f(x), gens=g, grad="zero" if op in _ZERO_GRAD else True)
         for op, (f, g) in UNARY.items()]
CASES.append(Case("clip", S1, ref=lambda x, a_min, a_max: np.clip(x, a_min, a_max),
                  params=dict(a_min=-0.5, a_max=0.5), gens=away(gap=0.05)))

BIN = {
    "add": (np.add, None), "sub": (np.subtract, None), "mul": (np.multiply, None), "div": (np.divide, away()),
    "mod": (np.mod, [uniform(0.2, 3), uniform(0.6, 1.0)]), "power": (np.power, [pos, uniform(-1, 1)]),
    "maximum": (np.maximum, distinct()), "minimum": (np.minimum, distinct()), "hypot": (np.hypot, away()),
}
CMP = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
       "lesser": np.less, "lesser_equal": np.less_equal, "logical_and": np.logical_and,
       "logical_or": np.logical_or, "logical_xor": np.logical_xor}


def _cmp_ref(f):
    return lambda a, b: f(a, b).astype(a.dtype)


def _ints(rng, shape, dtype):
    return rng.integers(-1, 2, size=shape).astype(dtype)


for k, (f, g) in BIN.items():
    ename = f"elemwise_{k}" if k in ("add", "sub", "mul", "div") else f"_{k}"
    # mod: keep away from the jumps of floor(a / b) for the numeric gradient
    CASES.append(Case(ename, S2, ref=f, gens=g))
    CASES.append(Case(f"broadcast_{k}", SB, ref=f, gens=g, grad=k != "mod"))
for k, f in CMP.items():
    CASES.append(Case(f"_{k}", S2, ref=_cmp_ref(f), gens=_ints, grad="zero"))
    CASES.append(Case(f"broadcast_{k}", SB, ref=_cmp_ref(f), gens=_ints, grad="zero"))

SCALAR = {
    "_plus_scalar": (lambda x, s: x + s, None), "_minus_scalar": (lambda x, s: x - s, None),
    "_rminus_scalar": (lambda x, s: s - x, None), "_mul_scalar": (lambda x, s: x * s, None),
    "_div_scalar": (lambda x, s: x / s, None), "_rdiv_scalar": (lambda x, s: s / x, away()),
    "_mod_scalar": (lambda x, s: np.mod(x, s), uniform(0.1, 1.4)),
    "_rmod_scalar": (lambda x, s: np.mod(s, x), uniform(0.8, 1.4)),
    "_power_scalar": (lambda x, s: np.power(x, s), pos), "_rpower_scalar": (lambda x, s: np.power(s, x), None),
    "_maximum_scalar": (lambda x, s: np.maximum(x, s), away(gap=0.05)),
    "_minimum_scalar": (lambda x, s: np.minimum(x, s), away(gap=0.05)),
    "_hypot_scalar": (lambda x, s: np.hypot(x, s), None),
}
for k, (f, g) in SCALAR.items():
    s = 0.0 if k in ("_maximum_scalar", "_minimum_scalar") else 1.5
    CASES.append(Case(k, S1, ref=lambda x, scalar, f=f: f(x, scalar).astype(x.dtype), params=dict(scalar=s), gens=g))
for k, f in {"_equal_scalar": np.equal, "_not_equal_scalar": np.not_equal, "_greater_scalar": np.greater,
             "_greater_equal_scalar": np.greater_equal, "_lesser_scalar": np.less,
             "_lesser_equal_scalar": np.less_equal, "_logical_and_scalar": np.logical_and,
             "_logical_or_scalar": np.logical_or, "_logical_xor_scalar": np.logical_xor}.items():
    CASES.append(Case(k, S1, ref=lambda x, scalar, f=f: f(x, scalar).astype(x.dtype), params=dict(scalar=0.0),
                      gens=_ints, grad="zero"))


def _axis(axis, ndim, exclude=False):
    if axis is None:
        return None if not exclude else ()
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % ndim for a in axes)
    return tuple(a for a in range(ndim) if a not in axes) if exclude else axes


def _red(f):
    def ref(x, axis=None, keepdims=False, exclude=False):
        return f(x, axis=_axis(axis, x.ndim, exclude), keepdims=keepdims)

    return ref


SR = [((2, 3, 4),)]
for k, f in {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
             "nansum": np.nansum, "nanprod": np.nanprod}.items():
    g = distinct() if k in ("max", "min") else (away(0.5, 1.5) if "prod" in k else None)
    for params in ({}, dict(axis=1), dict(axis=(0, 2), keepdims=True), dict(axis=1, exclude=True)):
        CASES.append(Case(k, SR, ref=_red(f), params=params, gens=g, name=f"{k}-{params}"))


def _norm_ref(x, ord=2, axis=None, keepdims=False):
    ax = _axis(axis, x.ndim)
    return np.sqrt((x * x).sum(axis=ax, keepdims=keepdims)) if ord == 2 else np.abs(x).sum(axis=ax, keepdims=keepdims)


CASES += [Case("norm", SR, ref=_norm_ref, gens=away()), Case("norm", SR, ref=_norm_ref, params=dict(axis=1, ord=1),
                                                              gens=away(), name="norm-l1")]
for k, f in {"argmax": np.argmax, "argmin": np.argmin}.items():
    CASES.append(Case(k, SR, ref=lambda x, axis, keepdims=False, f=f: f(x, axis=axis, keepdims=keepdims).astype(x.dtype),
                      params=dict(axis=1), gens=distinct(), grad="zero"))
    CASES.append(Case(k, SR, ref=lambda x, f=f: np.array([f(x)], dtype=x.dtype), gens=distinct(), grad="zero",
                      name=f"{k}-flat"))
