"""How an ``mx.np`` function reaches the registry: a *frontend* turns ``op(name, inputs, **params)``
into an engine push (``mx.np``, ``mx.nd.np``) or a graph node (``mx.sym.np``, installed by the
symbol layer). Every ``mx.np`` function is written once against a frontend ``F``
(``def sum(F, a, axis=None, ...)``); :func:`bind` makes the namespace's functions of them.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as _np

from ..ndarray._invoke import invoke
from ..ndarray.ndarray import NDArray
from ..runtime.context import Context, current_context
from ..util import is_np_default_dtype

__all__ = ["NDFrontend", "bind", "is_scalar", "default_float"]


def default_float() -> str:
    """``float32``, or ``float64`` under ``npx.set_np(dtype=True)``."""
    return "float64" if is_np_default_dtype() else "float32"


def is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Number, _np.bool_, bool)) and not isinstance(x, NDArray)


class NDFrontend:
    """Imperative frontend: one engine push per op; results are ``mx.np.ndarray``."""

    kind = "ndarray"
    ndarray_cls: type | None = None  # set by multiarray.py

    def is_array(self, x: Any) -> bool:
        return isinstance(x, NDArray)

    def wrap(self, x: Any) -> Any:
        cls = self.ndarray_cls
        if isinstance(x, NDArray):
            if type(x) is not cls:
                x.__class__ = cls  # a fresh result: the same object, NumPy's semantics
            return x
        if isinstance(x, (list, tuple)):
            return type(x)(self.wrap(v) for v in x)
        return x

    def asarray(self, x: Any, dtype: Any = None, ctx: Context | None = None) -> Any:
        """``x`` as an array of this frontend (array-likes are copied onto ``ctx``)."""
        if isinstance(x, NDArray):
            return x
        from .multiarray import array

        return array(x, dtype=dtype, ctx=ctx)

    def op(self, name: str, inputs: list, out: Any = None, ctx: Context | None = None, **params: Any) -> Any:
        if inputs:
            inputs = [x if isinstance(x, NDArray) else self.asarray(x) for x in inputs]
        elif ctx is not None:
            params["ctx"] = _ctx(ctx)
        res = invoke(name, inputs, out=out, **params)
        return self.wrap(res)


def _ctx(ctx: Any) -> Context:
    if ctx is None:
        return current_context()
    if isinstance(ctx, str):
        return Context(ctx.split("(")[0], int(ctx.split("(")[1].rstrip(")")) if "(" in ctx else 0)
    return ctx


def _as_cls(x: NDArray, cls: type) -> NDArray:
    """The same array (chunk, view and autograd entry) as an instance of ``cls``."""
    y = cls.__new__(cls)
    y._chunk, y._data, y._ctx, y._ag = x._chunk, x._data, x._ctx, x._ag
    return y


def bind(frontend: Any, functions: dict[str, Callable]) -> dict[str, Callable]:
    """The public functions of a namespace: each ``fn(F, ...)`` with ``F`` fixed to ``frontend``."""
    out = {}
    for name, fn in functions.items():
        out[name] = _bound(frontend, fn, name)
    return out


def _bound(frontend: Any, fn: Callable, name: str) -> Callable:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(frontend, *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    sig = None
    try:
        sig = inspect.signature(fn)
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        call.__signature__ = sig  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    if not fn.__doc__:
        call.__doc__ = numpy_doc(numpy_namespace(fn), name, sig)
    return call


def numpy_namespace(fn: Callable) -> str:
    """The NumPy namespace an ``mx.np`` function mirrors: ``numpy``, ``numpy.linalg`` or ``numpy.random``."""
    module = getattr(fn, "__module__", "") or ""
    return {"_api_linalg": "numpy.linalg", "_api_random": "numpy.random"}.get(module.rsplit(".", 1)[-1], "numpy")


def numpy_doc(namespace: str, name: str, sig: inspect.Signature | None = None) -> str:
    """The docstring of an ``mx.np`` function: NumPy's one-line summary of the function it mirrors, and
    how ours differs (an op of the engine, arrays of the engine, ``ctx``)."""
    module: Any = _np
    for part in namespace.split(".")[1:]:
        module = getattr(module, part, None)
    summary = ""
    doc = getattr(getattr(module, name, None), "__doc__", None)
    if doc:
        paragraphs = [p.strip() for p in inspect.cleandoc(doc).split("\n\n") if p.strip()]
        # the first paragraph that is prose, not the call signature some ufuncs start with
        summary = next((" ".join(p.split()) for p in paragraphs if not p.startswith(name + "(")), "")
    call = f"{name}{sig}" if sig is not None else name
    ours = "mx." + namespace.replace("numpy", "np", 1)
    return (f"{summary}\n\n" if summary else "") + (
        f"``{ours}.{call}``: ``{namespace}.{name}`` as an op of the engine: it is pushed and returns at once; "
        f"array results are ``mx.np.ndarray`` on the inputs' context (``ctx`` where the function makes one).")
