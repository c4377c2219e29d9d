"""``mx.np.fallback``: the NumPy functions MXNet 1.9.1's ``mx.np`` offers without an op of its own.

Each runs official NumPy on host copies of its ``mx.np.ndarray`` arguments (as MXNet's
"fallback" does): array results come back as ``mx.np.ndarray`` on the first argument's
context, NumPy scalars and Python values come back as they are, nothing is recorded for
autograd (calling one while recording raises), and ``out=`` receives the result.
``mx.np`` takes the ones it has no op for; ``mx.np.linalg`` those of :data:`LINALG_NAMES`.

>>> from mxasync import np
>>> np.nanmax(np.array([1.0, float("nan"), 3.0]))
np.float32(3.0)
>>> np.modf(np.array([1.5, 2.25]))[0]
array([0.5 , 0.25])
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as _onp

from ..ndarray._recording import is_recording
from ..ndarray.ndarray import NDArray
from ._interop import _back, _ctx_of, _to_host

#: MXNet 1.9.1's ``mx.np.fallback.__all__`` less ``mirr``, ``npv``, ``pmt``, ``ppmt``, ``pv`` and
#: ``rate``, which NumPy removed (they live in ``numpy_financial``)
NAMES = (
    "allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition", "argwhere", "array_equal",
    "array_equiv", "choose", "compress", "corrcoef", "correlate", "count_nonzero", "cov", "digitize", "divmod",
    "extract", "flatnonzero", "float_power", "frexp", "heaviside", "histogram2d", "histogram_bin_edges",
    "histogramdd", "i0", "in1d", "interp", "intersect1d", "isclose", "isin", "ix_", "lexsort", "min_scalar_type",
    "modf", "msort", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "ndim", "partition", "packbits",
    "piecewise", "poly", "polyadd", "polydiv", "polyfit", "polyint", "polymul", "polysub", "positive",
    "promote_types", "ptp", "real", "result_type", "rollaxis", "roots", "searchsorted", "select", "setdiff1d",
    "setxor1d", "signbit", "size", "spacing", "take_along_axis", "trapz", "tril_indices_from", "trim_zeros",
    "triu_indices_from", "union1d", "unpackbits", "unwrap", "vander",
)
#: MXNet 1.9.1's ``mx.np.linalg.fallback_linalg.__all__``
LINALG_NAMES = ("cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr")
#: the functions NumPy removed from the list above (NumPy 2), with NumPy 2's own spelling
_REMOVED = {
    "alltrue": lambda a, axis=None, out=None, keepdims=False: _onp.all(a, axis=axis, out=out, keepdims=keepdims),
    "msort": lambda a: _onp.sort(a, axis=0),
    "in1d": lambda ar1, ar2, assume_unique=False, invert=False, **kw: _onp.isin(
        ar1, ar2, assume_unique=assume_unique, invert=invert, **kw).ravel(),
    "trapz": lambda y, x=None, dx=1.0, axis=-1: _onp.trapezoid(y, x=x, dx=dx, axis=axis),
}

__all__ = list(NAMES)


def _has_array(x) -> bool:
    if isinstance(x, NDArray):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_array(v) for v in x)
    return False


def run(func, name: str, args: tuple, kwargs: dict) -> Any:
    """``func`` (a NumPy function) on host copies of ``args``/``kwargs``, its arrays back on the engine."""
    ctx = _ctx_of(args) or _ctx_of(tuple(kwargs.values()))
    if ctx is None:
        return func(*args, **kwargs)  # no mx.np array: NumPy's own answer, as MXNet gives it
    if is_recording():
        raise ValueError(f"Falling back to NumPy operator {name} with autograd active is not supported. "
                         "Please consider moving the operator to the outside of the autograd scope.")
    out = kwargs.pop("out", None)
    if out is not None and not _has_array(out):
        kwargs["out"] = out  # a NumPy array: NumPy writes it
        out = None
    res = func(*_to_host(args), **_to_host(kwargs))
    if out is None:
        return _back(res, ctx)
    outs = out if isinstance(out, tuple) else (out,)
    vals = res if isinstance(res, tuple) else (res,)
    if len(outs) != len(vals):
        raise ValueError(f"{name}: out= has {len(outs)} arrays for {len(vals)} results")
    for o, v in zip(outs, vals, strict=True):
        o[...] = v
    return out


def _make(name: str, func) -> Any:
    @functools.wraps(func)
    def fallback(*args, **kwargs):
        return run(func, name, args, kwargs)

    fallback.__name__ = fallback.__qualname__ = name
    fallback.__module__ = __name__
    # NumPy's examples print NumPy arrays: name the function rather than copy its doc
    fallback.__doc__ = f"NumPy's ``{name}`` on host copies of the arguments (see :mod:`{__name__}`)."
    return fallback


def _numpy_function(name: str, linalg: bool = False) -> Any:
    space = _onp.linalg if linalg else _onp
    if name in _REMOVED:
        return _REMOVED[name]  # NumPy 2's spelling also where NumPy 1 still warns of the old one
    return getattr(space, name)


globals().update({n: _make(n, _numpy_function(n)) for n in NAMES})


def genfromtxt(*args, **kwargs) -> Any:
    """NumPy's ``genfromtxt`` as an ``mx.np.ndarray`` on ``ctx`` (default: the current context)."""
    from .multiarray import array

    ctx = kwargs.pop("ctx", None)
    ret = _onp.genfromtxt(*args, **kwargs)
    return array(ret, dtype=ret.dtype, ctx=ctx)


def set_printoptions(precision=None, threshold=None, **kwarg) -> None:
    """NumPy's print options ``precision`` and ``threshold``, which ``mx.np`` arrays print with."""
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions only supports parameters"
                                  " precision and threshold for now.")
    _onp.set_printoptions(precision=precision, threshold=threshold)


def linalg_functions() -> dict[str, Any]:
    """The fallbacks of ``mx.np.linalg`` (:data:`LINALG_NAMES`), by name."""
    return {n: _make(n, _numpy_function(n, linalg=True)) for n in LINALG_NAMES}
