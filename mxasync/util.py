"""``mx.util``: MXNet's switches for the NumPy interface, and small environment helpers.

mxasync has MXNet's classic NDArray semantics only: the NumPy-shape and NumPy-array modes
(``mx.np``/``mx.npx``) are not provided. Asking for them to be off works; asking for them
on raises ``NotImplementedError`` with that reason, rather than silently running classic
semantics under a NumPy-mode flag.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from .base import py_str  # noqa: F401 - MXNet has it here too

__all__ = ["np_shape", "is_np_shape", "set_np_shape", "use_np_shape", "np_array", "is_np_array",
           "use_np_array", "use_np", "set_np", "reset_np", "getenv", "setenv", "get_gpu_count",
           "set_module", "py_str"]

_NO_NUMPY_MODE = ("mxasync does not provide MXNet's NumPy interface (mx.np / NumPy-shape semantics); "
                  "see docs/porting.md")


def _refuse_on(active: bool, what: str) -> None:
    if active:
        raise NotImplementedError(f"{what}(True): {_NO_NUMPY_MODE}")


def is_np_shape() -> bool:
    """Whether NumPy-shape semantics are on: never in mxasync.

    >>> is_np_shape()
    False
    """
    return False


def set_np_shape(active: bool) -> bool:
    """Turn NumPy-shape semantics off (on is refused); returns the previous state (False)."""
    _refuse_on(bool(active), "set_np_shape")
    return False


class _ShapeScope:
    def __init__(self, active: bool, what: str) -> None:
        self._active = bool(active)
        self._what = what

    def __enter__(self) -> _ShapeScope:
        _refuse_on(self._active, self._what)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def np_shape(active: bool = True) -> _ShapeScope:
    """A ``with`` scope for NumPy-shape semantics; ``np_shape(False)`` is the only one available.

    >>> with np_shape(False):
    ...     is_np_shape()
    False
    """
    return _ShapeScope(active, "np_shape")


def is_np_array() -> bool:
    """Whether NumPy-array semantics are on: never in mxasync."""
    return False


def np_array(active: bool = True) -> _ShapeScope:
    """A ``with`` scope for NumPy-array semantics; only ``np_array(False)`` is available."""
    return _ShapeScope(active, "np_array")


def _refusing_decorator(what: str) -> Callable:
    def decorate(func: Any) -> Any:
        if isinstance(func, type):
            raise NotImplementedError(f"{what}: {_NO_NUMPY_MODE}")

        @functools.wraps(func)
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(f"{what}({getattr(func, '__name__', func)}): {_NO_NUMPY_MODE}")
        return refuse
    return decorate


use_np_shape = _refusing_decorator("use_np_shape")
use_np_array = _refusing_decorator("use_np_array")
use_np = _refusing_decorator("use_np")


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Turn the NumPy interface on: refused (see the module docstring) unless all are False."""
    _refuse_on(bool(shape or array or dtype), "set_np")


def reset_np() -> None:
    """Turn the NumPy interface off: it always is."""


def getenv(name: str) -> str | None:
    """The value of environment variable ``name`` (None when unset)."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set (or with None unset) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def get_gpu_count() -> int:
    """Number of GPUs mxasync can use."""
    from .runtime.context import num_gpus

    return num_gpus()


def set_module(module: str) -> Callable:
    """Decorator setting ``__module__`` of a function or class (MXNet's docs helper)."""
    def decorate(obj: Any) -> Any:
        if module is not None:
            obj.__module__ = module
        return obj
    return decorate
