"""``mx.np.random`` functions, written once against a frontend ``F``; the seeded generator of the
context (``mx.random.seed`` / ``npx.seed``) draws every sample on the engine."""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..operator.numpy.random import DISTRIBUTIONS
from ._frontend import default_float

FUNCS: dict[str, Any] = {}


def _size(size):
    if size is None:
        return None
    return (int(size),) if isinstance(size, (int, _np.integer)) else tuple(int(s) for s in size)


def _sampler(name, names, defaults):
    def f(F, *args, size=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
        if len(args) > len(names):  # NumPy's order: the parameters, then size
            args, size = args[:len(names)], args[len(names)]
        vals = dict(zip(names, args, strict=False))
        for n, d in zip(names, defaults, strict=True):
            vals.setdefault(n, kwargs.pop(n, d))
        if kwargs:  # NumPy's (and MXNet's) signature: an unknown keyword is a TypeError, never ignored
            raise TypeError(f"np.random.{name}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        arrays, params = [], {}
        for n in names:
            v = vals[n]
            if F.is_array(v):
                arrays.append((n, v))
            elif isinstance(v, (list, tuple, _np.ndarray)):
                arrays.append((n, F.asarray(v)))
            else:
                params[n] = float(v)
        first = getattr(arrays[0][1], "dtype", None) if arrays else None  # symbols have no dtype
        dt = _np.dtype(dtype).name if dtype is not None else (
            first.name if first is not None and first.kind == "f" else default_float())
        for n in _POSITIVE.get(name, ()):
            if n in params and (params[n] <= 0 if name in _STRICT else params[n] < 0):
                raise ValueError(f"np.random.{name}: {n} must be positive, got {params[n]}")
        return F.op(f"_npi_random_{name}", [a for _, a in arrays], out=out, ctx=ctx or device, size=_size(size),
                    dtype=dt, array_params=tuple(n for n, _ in arrays), **params)
    f.__name__ = name
    f.__doc__ = f"Samples of NumPy's ``{name}`` distribution (``_npi_random_{name}``)."
    return f


_POSITIVE = {"gamma": ("shape", "scale"), "exponential": ("scale",), "rayleigh": ("scale",), "weibull": ("a",),
             "pareto": ("a",), "beta": ("a", "b"), "chisquare": ("df",), "lognormal": ("sigma",),
             "normal": ("scale",), "logistic": ("scale",), "gumbel": ("scale",), "power": ("a",)}
_STRICT = ("gamma", "pareto", "power", "weibull")  # where MXNet refuses 0 too

for _n, (_m, _ps) in DISTRIBUTIONS.items():
    FUNCS[_n] = _sampler(_n, [p for p, _ in _ps], [d for _, d in _ps])


def randint(F, low, high=None, size=None, dtype=None, ctx=None, out=None, device=None):
    if high is None:
        low, high = 0, low
    return F.op("_npi_random_randint", [], out=out, ctx=ctx or device, low=int(low), high=int(high),
                size=_size(size), dtype=_np.dtype(dtype or "int64").name)


def rand(F, *size, **kwargs):
    return FUNCS["uniform"](F, 0.0, 1.0, size=size or None, **kwargs)


def randn(F, *size, **kwargs):
    return FUNCS["normal"](F, 0.0, 1.0, size=size or None, **kwargs)


def choice(F, a, size=None, replace=True, p=None, ctx=None, out=None):
    ins = []
    params: dict[str, Any] = {"size": _size(size), "replace": bool(replace), "weighted": p is not None}
    if F.is_array(a):
        ins.append(a)
        params["a"] = None
    else:
        params["a"] = int(a)
    if p is not None:
        ins.append(p if F.is_array(p) else F.asarray(p))
    return F.op("_npi_random_choice", ins, out=out, ctx=ctx, **params)


def multinomial(F, n, pvals, size=None):
    if F.is_array(pvals):
        return F.op("_npi_random_multinomial", [pvals], n=int(n), size=_size(size))
    return F.op("_npi_random_multinomial", [], n=int(n), pvals=tuple(float(v) for v in pvals), size=_size(size))


def multivariate_normal(F, mean, cov, size=None, check_valid=None, tol=None):
    return F.op("_npi_random_multivariate_normal", [mean, cov], size=_size(size))


def shuffle(F, x):
    res = F.op("_npi_shuffle", [x])
    x[...] = res
    return None


for _f in (randint, rand, randn, choice, multinomial, multivariate_normal, shuffle):
    FUNCS[_f.__name__] = _f
