"""``mx.util``: MXNet's switches for the NumPy interface, and small environment helpers.

NumPy-shape mode (``set_np_shape(True)``, ``with np_shape():``) makes shape ``()`` a scalar
and a 0 in a shape a zero-size axis, where MXNet's classic semantics read both as
"unknown". NumPy-array mode (``set_np``, ``use_np``) makes Gluon and ``mx.np`` hand out
``mx.np.ndarray``. ``set_np(dtype=True)`` makes float64 NumPy's default float dtype of the
creation functions (MXNet's ``is_np_default_dtype``). The switches are process-wide, as
MXNet's Python front end has them (its flags live in thread-local C++ state that every
thread of a script inherits from one setting).

>>> set_np_shape(True)
False
>>> is_np_shape()
True
>>> set_np_shape(False)
True
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as _onp

from .base import (
    MXAsyncError,
    py_str,  # noqa: F401 - MXNet has it here too
)

__all__ = ["np_shape", "is_np_shape", "set_np_shape", "use_np_shape", "np_array", "is_np_array",
           "use_np_array", "use_np", "set_np", "reset_np", "is_np_default_dtype", "np_default_dtype",
           "getenv", "setenv", "get_gpu_count", "set_module", "py_str", "get_gpu_memory", "get_cuda_compute_capability",
           "np_ufunc_legal_option", "wrap_np_unary_func", "wrap_np_binary_func"]


class _Flags:
    """The three switches (one object, so that scopes restore exactly what they changed)."""

    shape = False
    array = False
    default_dtype = False


_FLAGS = _Flags()


def is_np_shape() -> bool:
    """Whether NumPy-shape semantics are on."""
    return _FLAGS.shape


def set_np_shape(active: bool) -> bool:
    """Turn NumPy-shape semantics on or off; returns the previous state."""
    prev = _FLAGS.shape
    _FLAGS.shape = bool(active)
    return prev


def is_np_array() -> bool:
    """Whether NumPy-array semantics are on (Gluon and data loaders hand out ``mx.np.ndarray``)."""
    return _FLAGS.array


def set_np_array(active: bool) -> bool:
    prev = _FLAGS.array
    _FLAGS.array = bool(active)
    return prev


def is_np_default_dtype() -> bool:
    """Whether float64 is the default float dtype of ``mx.np`` (``set_np(dtype=True)``)."""
    return _FLAGS.default_dtype


def set_np_default_dtype(active: bool) -> bool:
    prev = _FLAGS.default_dtype
    _FLAGS.default_dtype = bool(active)
    return prev


class _Scope:
    """``with`` scope setting one switch and restoring the previous value."""

    def __init__(self, setter: Callable[[bool], bool], active: bool) -> None:
        self._setter = setter
        self._active = bool(active)
        self._prev: bool | None = None

    def __enter__(self) -> _Scope:
        self._prev = self._setter(self._active)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prev is not None:
            self._setter(self._prev)


class _NumpyShapeScope(_Scope):
    """MXNet's name for the scope :func:`np_shape` returns (``_is_np_shape``: what it turns on)."""

    _current = threading.local()  # MXNet's class attribute (its test files assign to it)

    def __init__(self, is_np_shape: bool) -> None:
        super().__init__(set_np_shape, is_np_shape)
        self._is_np_shape = bool(is_np_shape)


class _NumpyArrayScope(_Scope):
    """MXNet's name for the scope :func:`np_array` returns (``_is_np_array``: what it turns on)."""

    _current = threading.local()

    def __init__(self, is_np_array: bool) -> None:
        super().__init__(set_np_array, is_np_array)
        self._is_np_array = bool(is_np_array)


def np_shape(active: bool = True) -> _Scope:
    """A ``with`` scope for NumPy-shape semantics.

    >>> with np_shape(True):
    ...     is_np_shape()
    True
    """
    return _NumpyShapeScope(active)


def np_array(active: bool = True) -> _Scope:
    """A ``with`` scope for NumPy-array semantics."""
    return _NumpyArrayScope(active)


def np_default_dtype(active: bool = True) -> _Scope:
    """A ``with`` scope for float64 as the default float dtype."""
    return _Scope(set_np_default_dtype, active)


def _wrap_scopes(func: Any, scopes: tuple) -> Any:
    """``func`` (or every method of a class) run inside ``scopes``."""
    if isinstance(func, type):
        for name, member in list(vars(func).items()):
            if name.startswith("__") and name not in ("__init__", "__call__", "__repr__"):
                continue
            if inspect.isfunction(member):
                setattr(func, name, _wrap_scopes(member, scopes))
            elif isinstance(member, (staticmethod, classmethod)):
                setattr(func, name, type(member)(_wrap_scopes(member.__func__, scopes)))
        return func
    if not callable(func):
        raise TypeError(f"use_np: {func!r} is neither a function nor a class")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        managers = [s() for s in scopes]
        for m in managers:
            m.__enter__()
        try:
            return func(*args, **kwargs)
        finally:
            for m in reversed(managers):
                m.__exit__(None, None, None)
    return wrapped


def use_np_shape(func: Any) -> Any:
    """Run ``func`` (a function, or every method of a class) with NumPy-shape semantics on."""
    return _wrap_scopes(func, (lambda: np_shape(True),))


def use_np_array(func: Any) -> Any:
    """Run ``func`` (a function, or every method of a class) with NumPy-array semantics on."""
    return _wrap_scopes(func, (lambda: np_array(True),))


def use_np(func: Any) -> Any:
    """Both ``use_np_shape`` and ``use_np_array`` (what MXNet's NumPy-interface code decorates with)."""
    return _wrap_scopes(func, (lambda: np_shape(True), lambda: np_array(True)))


def use_np_default_dtype(func: Any) -> Any:
    return _wrap_scopes(func, (lambda: np_default_dtype(True),))


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Turn the NumPy interface on: NumPy shapes, ``mx.np`` arrays, and (``dtype``) float64 default."""
    if array and not shape:
        raise ValueError("NumPy Shape semantics must be turned on when turning on NumPy Array semantics")
    set_np_shape(shape)
    set_np_array(array)
    set_np_default_dtype(dtype)


def reset_np() -> None:
    """Turn the NumPy interface off (classic MXNet semantics)."""
    set_np(shape=False, array=False, dtype=False)


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


def _cuda_runtime(what: str) -> Any:
    try:
        import cupy  # an optional dependency (the gpu extra): imported where a GPU is asked about
    except ImportError as err:
        raise MXAsyncError(f"{what}: no GPU support here (install mxasync[gpu] for CuPy)") from err
    return cupy.cuda


def get_gpu_memory(gpu_dev_id: int) -> tuple[int, int]:
    """``(free, total)`` bytes of GPU ``gpu_dev_id``'s memory."""
    cuda = _cuda_runtime("get_gpu_memory")
    with cuda.Device(gpu_dev_id):
        free, total = cuda.runtime.memGetInfo()
    return int(free), int(total)


def get_cuda_compute_capability(ctx: Any) -> int:
    """The CUDA compute capability of a GPU context as an int (70 for ``sm_70``)."""
    if getattr(ctx, "device_type", None) != "gpu":
        raise ValueError(f"Expecting a gpu context to get cuda compute capability, while received ctx {ctx}")
    cuda = _cuda_runtime("get_cuda_compute_capability")
    return int(cuda.Device(ctx.device_id).compute_capability)


# NumPy's ufunc keywords and the values MXNet's NumPy-interface ufuncs accept (their defaults)
_NP_UFUNC_DEFAULT_KWARGS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None, "subok": True}
_NP_UFUNC_DTYPES = {"int8", "uint8", "int32", "int64", "float16", "float32", "float64"}


def np_ufunc_legal_option(key: str, value: Any) -> bool:
    """Whether ``key=value`` is a legal NumPy ufunc argument (a known keyword and an allowed value).

    >>> np_ufunc_legal_option("casting", "unsafe"), np_ufunc_legal_option("casting", "wild")
    (True, False)
    """
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        return (isinstance(value, str) and value in _NP_UFUNC_DTYPES) or \
            (isinstance(value, type) and issubclass(value, _onp.generic) and _onp.dtype(value).name in _NP_UFUNC_DTYPES)
    if key == "subok":
        return isinstance(value, bool)
    return False


def _check_ufunc_kwargs(name: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key not in _NP_UFUNC_DEFAULT_KWARGS:
            raise TypeError(f"{key} is an invalid keyword to function '{name}'")
        if value != _NP_UFUNC_DEFAULT_KWARGS[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError(f"{key}={value} is not implemented yet for operator {name}")
            raise TypeError(f"{key}={value} not understood for operator {name}")


def wrap_np_unary_func(func: Callable) -> Callable:
    """``func(x, out=None)`` taking NumPy's ufunc keywords: their defaults pass, other legal values
    raise ``NotImplementedError``, anything else ``TypeError`` (MXNet's uniform errors)."""
    @functools.wraps(func)
    def wrapped(x: Any, out: Any = None, **kwargs: Any) -> Any:
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func: Callable) -> Callable:
    """:func:`wrap_np_unary_func` for ``func(x1, x2, out=None)``."""
    @functools.wraps(func)
    def wrapped(x1: Any, x2: Any, out: Any = None, **kwargs: Any) -> Any:
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x1, x2, out=out)
    return wrapped
