"""NumPy's protocols on ``mx.np.ndarray`` as MXNet 1.9 has them: an official NumPy function or
ufunc called on ``mx.np`` arrays runs ``mx.np``'s function of the same name when there is one
(on the engine); otherwise NumPy's own runs on copies of the arrays and the result comes back
as ``mx.np`` arrays (MXNet's "fallback")."""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..ndarray.ndarray import NDArray


def _lookup(func) -> Any:
    from . import _api_registry

    mod = getattr(func, "__module__", "") or ""
    name = func.__name__
    if "linalg" in mod:
        from . import linalg

        return getattr(linalg, name, None)
    if "random" in mod:
        from . import random

        return getattr(random, name, None)
    return getattr(_api_registry.ND, name, None)


def _to_host(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_host(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_host(v) for k, v in x.items()}
    return x


def _back(x, ctx):
    from .multiarray import array

    if isinstance(x, _np.ndarray):
        return array(x, dtype=x.dtype, ctx=ctx)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # NumPy 2's named results (QRResult, ...)
        return type(x)(*(_back(v, ctx) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_back(v, ctx) for v in x)
    return x


def _ctx_of(args):
    for a in args:
        if isinstance(a, NDArray):
            return a.ctx
        if isinstance(a, (list, tuple)):
            c = _ctx_of(a)
            if c is not None:
                return c
    return None


def array_function(func, args, kwargs):
    mine = _lookup(func)
    if mine is not None:
        return mine(*args, **kwargs)
    res = func(*_to_host(args), **_to_host(kwargs))
    return _back(res, _ctx_of(args))


def array_ufunc(ufunc, method, inputs, kwargs):
    if method == "__call__" and not kwargs.get("out"):
        mine = _lookup(ufunc)
        if mine is not None:
            return mine(*inputs, **kwargs)
    res = getattr(ufunc, method)(*_to_host(inputs), **_to_host(kwargs))
    return _back(res, _ctx_of(inputs))
