"""``mx.np`` math: elementwise functions, reductions, products, written once against a frontend ``F``.

Each function is ``fn(F, ...)``; :mod:`._api_registry` binds them to ``mx.np`` (engine pushes)
and the symbol layer to ``mx.sym.np`` (graph nodes). Every one is an op of the registry.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as _np

from ..operator.numpy.elemwise import BINARY, COMPARE, UNARY, UNARY_BOOL, UNARY_INT
from . import _api_sorting
from ._exports import exporter
from ._frontend import default_float, is_scalar

FUNCS: dict[str, Any] = {}
_export = exporter(FUNCS)


_CASTING = ("no", "equiv", "safe", "same_kind", "unsafe")


def _no_kwargs(name, kwargs):
    """NumPy's ufunc keywords (where, dtype, casting, order, subok) are not supported, as in MXNet;
    a value NumPy itself would refuse is a TypeError first."""
    if "dtype" in kwargs:
        _np.dtype(kwargs["dtype"])  # TypeError for a name that is no dtype
    if "casting" in kwargs and kwargs["casting"] not in _CASTING:
        raise TypeError(f"np.{name}: casting must be one of {_CASTING}, got {kwargs['casting']!r}")
    if kwargs:
        raise NotImplementedError(f"np.{name}: {sorted(kwargs)} not supported (only out=)")


def _unary(name):
    def f(F, x, out=None, **kwargs):
        _no_kwargs(name, kwargs)
        if out is not None and name in UNARY_BOOL and getattr(out, "dtype", None) != _np.bool_:
            raise TypeError(f"np.{name}: out= must be a boolean array, got dtype {out.dtype}")
        return F.op(f"_npi_{name}", [x], out=out)
    f.__doc__ = f"NumPy's ``{name}``, elementwise (an op of the registry, ``_npi_{name}``)."
    return f


for _n in list(UNARY) + list(UNARY_BOOL) + list(UNARY_INT):
    _export(_unary(_n), _n)


def _binary_call(F, name, a, b, out=None):
    if F.is_array(a) and F.is_array(b):
        return F.op(f"_npi_{name}", [a, b], out=out, default_float=default_float())
    if not F.is_array(a) and not F.is_array(b):
        if is_scalar(a) and is_scalar(b):
            return getattr(_np, name)(a, b)
        a = a if F.is_array(a) or is_scalar(a) else F.asarray(a)
        b = b if F.is_array(b) or is_scalar(b) else F.asarray(b)
        if not (F.is_array(a) or F.is_array(b)):
            return getattr(_np, name)(a, b)
        return _binary_call(F, name, a, b, out)
    arr, s, reverse = (a, b, False) if F.is_array(a) else (b, a, True)
    if not is_scalar(s):
        s = F.asarray(s, ctx=getattr(arr, "ctx", None))
        return F.op(f"_npi_{name}", [s, arr] if reverse else [arr, s], out=out, default_float=default_float())
    is_int = isinstance(s, (numbers.Integral, _np.integer, bool, _np.bool_))
    return F.op(f"_npi_{name}", [arr], out=out, scalar=float(s), scalar_is_int=is_int, reverse=reverse,
                default_float=default_float())


def _binary(name):
    def f(F, x1, x2, out=None, **kwargs):
        _no_kwargs(name, kwargs)
        return _binary_call(F, name, x1, x2, out)
    f.__doc__ = f"NumPy's ``{name}`` with broadcasting (``_npi_{name}``); a Python scalar operand is a param."
    return f


for _n in list(BINARY) + list(COMPARE):
    _export(_binary(_n), _n)
_export(_binary("true_divide"), "divide")
_export(_binary("mod"), "remainder")


def _around(F, x, decimals=0, out=None):
    return F.op("_npi_around", [x], out=out, decimals=decimals)


_export(_around, "around")
_export(_around, "round")
_export(_around, "round_")


def _sum(F, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return F.op("_npi_sum", [a], out=out, axis=axis, dtype=_dt(dtype), keepdims=keepdims)


def _dt(dtype):
    return None if dtype is None else _np.dtype(dtype).name


def _mean(F, a, axis=None, dtype=None, out=None, keepdims=False):
    return F.op("_npi_mean", [a], out=out, axis=axis, dtype=_dt(dtype), keepdims=keepdims)


def _prod(F, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    return F.op("_npi_prod", [a], out=out, axis=axis, dtype=_dt(dtype), keepdims=keepdims)


def _max(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_max", [a], out=out, axis=axis, keepdims=keepdims)


def _min(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_min", [a], out=out, axis=axis, keepdims=keepdims)


def _std(F, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return F.op("_npi_std", [a], out=out, axis=axis, dtype=_dt(dtype), ddof=ddof, keepdims=keepdims)


def _var(F, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return F.op("_npi_var", [a], out=out, axis=axis, dtype=_dt(dtype), ddof=ddof, keepdims=keepdims)


def _argmax(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_argmax", [a], out=out, axis=axis, keepdims=keepdims)


def _argmin(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_argmin", [a], out=out, axis=axis, keepdims=keepdims)


def _any(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_any", [a], out=out, axis=axis, keepdims=keepdims)


def _all(F, a, axis=None, out=None, keepdims=False):
    return F.op("_npi_all", [a], out=out, axis=axis, keepdims=keepdims)


def _cumsum(F, a, axis=None, dtype=None, out=None):
    return F.op("_npi_cumsum", [a], out=out, axis=axis, dtype=_dt(dtype))


for _n, _f in {"sum": _sum, "mean": _mean, "prod": _prod, "product": _prod, "max": _max, "amax": _max,
               "min": _min, "amin": _min, "std": _std, "var": _var, "argmax": _argmax, "argmin": _argmin,
               "any": _any, "sometrue": _any, "all": _all, "alltrue": _all, "cumsum": _cumsum}.items():
    _export(_f, _n)


def _average(F, a, axis=None, weights=None, returned=False, out=None):
    ins = [a] if weights is None else [a, weights if F.is_array(weights) else F.asarray(weights)]
    avg, den = F.op("_npi_average", ins, axis=axis if not isinstance(axis, list) else tuple(axis),
                    weighted=weights is not None)
    if out is not None:
        out[...] = avg
        avg = out
    return (avg, den) if returned else avg


_export(_average, "average")


# -- products ---------------------------------------------------------------------------------------
def _dot(F, a, b, out=None):
    return F.op("_npi_dot", [a, b], out=out)


def _matmul(F, a, b, out=None, **kwargs):
    return F.op("_npi_matmul", [a, b], out=out)


def _tensordot(F, a, b, axes=2):
    if not isinstance(axes, int):
        axes = tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in axes)
    return F.op("_npi_tensordot", [a, b], axes=axes)


def _inner(F, a, b):
    return F.op("_npi_inner", [a, b])


def _outer(F, a, b):
    return F.op("_npi_outer", [a, b])


def _vdot(F, a, b):
    return F.op("_npi_vdot", [a, b])


def _kron(F, a, b):
    return F.op("_npi_kron", [a, b])


def _einsum(F, *operands, **kwargs):
    subscripts, ops = operands[0], list(operands[1:])
    out = kwargs.pop("out", None)
    optimize = bool(kwargs.pop("optimize", False))
    return F.op("_npi_einsum", ops, out=out, subscripts=subscripts, optimize=optimize, num_args=len(ops))


for _n, _f in {"dot": _dot, "matmul": _matmul, "tensordot": _tensordot, "inner": _inner, "outer": _outer,
               "vdot": _vdot, "kron": _kron, "einsum": _einsum}.items():
    _export(_f, _n)


# -- selection --------------------------------------------------------------------------------------
def _where(F, condition, x=None, y=None):
    if x is None and y is None:
        return _api_sorting.FUNCS["nonzero"](F, condition)  # np.where(c) is np.nonzero(c)
    if F.is_array(x) and F.is_array(y):
        return F.op("_npi_where", [condition, x, y])
    if F.is_array(x):
        return F.op("_npi_where_scalar", [condition, x], scalar=float(y), scalar_is_x=False)
    if F.is_array(y):
        return F.op("_npi_where_scalar", [condition, y], scalar=float(x), scalar_is_x=True)
    like = F.op("_npi_full_like", [condition], fill_value=float(y), dtype=default_float())
    return F.op("_npi_where_scalar", [condition, like], scalar=float(x), scalar_is_x=True)


def _clip(F, a, a_min=None, a_max=None, out=None):
    if a_min is None and a_max is None:
        raise ValueError("np.clip: one of a_min and a_max must be given")
    return F.op("_npi_clip", [a], out=out, a_min=None if a_min is None else float(a_min),
                a_max=None if a_max is None else float(a_max))


_export(_where, "where")
_export(_clip, "clip")
