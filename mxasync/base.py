"""Errors and environment knobs shared by every layer.

Nothing here imports another part of mxasync, so any module may import it.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from ._ctypes_names import *  # noqa: F403 - MXNet's ctypes names (handles, mx_uint, c_str_array, ...)
from ._ctypes_names import __all__ as _ctypes_all
from ._pyhelpers import *  # noqa: F403 - MXNet's pure-Python helpers of mxnet.base (classproperty, ...)
from ._pyhelpers import __all__ as _helpers_all
from ._pyhelpers import register_error

__all__ = ["MXAsyncError", "MXNetError", "MXAsyncValueError", "MXAsyncTypeError", "MXAsyncOSError", "MXAsyncKeyError",
           "os_error",
           "NotImplementedForSymbol",
           "env_int", "env_float", "env_str", "env_bool", "py_str", "c_str", "integer_types", "numeric_types", "string_types", "mx_real_t",
           "data_dir", "data_dir_default", "NotSupportedForSparseNDArray", *_ctypes_all, *_helpers_all]

# MXNet's type groups, used by code that checks arguments the way MXNet's Python layer does.
integer_types = (int, np.int32, np.int64)
numeric_types = (float, int, np.generic)
string_types = (str,)
mx_real_t = np.float32


def data_dir_default() -> str:
    """MXNet's default data directory: ``%APPDATA%\\mxnet`` on Windows, else ``~/.mxnet``."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """``$MXNET_HOME``, else :func:`data_dir_default` (where datasets and model files live), read when called."""
    return os.getenv("MXNET_HOME", data_dir_default())


def _as_list(obj) -> list:
    """``obj`` itself if it is a list, else ``[obj]`` (MXNet's helper; its test files import it)."""
    return obj if isinstance(obj, list) else [obj]


def py_str(x: bytes) -> str:
    """Bytes from a C string as ``str`` (MXNet's helper; UTF-8)."""
    return x.decode("utf-8")


def c_str(string: str) -> bytes:
    """A ``str`` as the UTF-8 bytes MXNet hands to its C API."""
    return string.encode("utf-8")


class MXAsyncError(RuntimeError):
    """The error users see for runtime, shape and parameter problems.

    ``mx.MXNetError`` is the same class, so ``except mx.MXNetError`` ports
    unchanged from MXNet code.
    """


MXNetError = MXAsyncError


class MXAsyncValueError(MXAsyncError, ValueError):
    """A bad value where MXNet (or numpy under it) raises ``ValueError``: both, so either
    ``except`` clause keeps working."""


class MXAsyncTypeError(MXAsyncError, TypeError):
    """An argument of a type the call cannot take, where NumPy (or MXNet) raises ``TypeError``:
    both (``mx.np.ones((2.5, 3))``, a complex or object array)."""


class MXAsyncKeyError(MXAsyncError, KeyError):
    """A missing name where MXNet raises ``KeyError``: both, with a readable message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MXAsyncOSError(MXAsyncError, OSError):
    """A file could not be read or written: an ``MXNetError`` (as MXNet raises) that is also an
    ``OSError`` carrying ``errno`` and the user's file name."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else OSError.__str__(self)


class _Unavailable(MXAsyncError):
    """A function called on a kind of array it does not serve (MXNet's two classes below share this)."""

    _unavailable = ""

    def __init__(self, function, alias: str | None = None, *args) -> None:
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return f"{msg} {self._unavailable} and only available in NDArray."


class NotImplementedForSymbol(_Unavailable):
    """A function that exists for NDArray only was called on a Symbol."""

    _unavailable = "is not implemented for Symbol"


class NotSupportedForSparseNDArray(_Unavailable):
    """A function that exists for dense NDArrays only was called on a sparse one."""

    _unavailable = "is not supported for SparseNDArray"


register_error("MXNetError", MXAsyncError)

_OS_ERRORS: dict[type, type] = {}


def os_error(err: OSError, message: str, filename: str) -> MXAsyncOSError:
    """``message`` as an :class:`MXAsyncOSError` that is also ``type(err)`` (``FileNotFoundError``,
    ``PermissionError``...), with ``err``'s errno and the user's ``filename``."""
    kind = type(err)
    cls = _OS_ERRORS.get(kind)
    if cls is None:
        cls = MXAsyncOSError if kind is OSError or not issubclass(kind, OSError) else \
            type(f"MXAsync{kind.__name__}", (MXAsyncOSError, kind), {"__module__": __name__})
        _OS_ERRORS[kind] = cls
    out = cls(message)
    out.errno, out.strerror, out.filename = err.errno, err.strerror, filename
    return out


def _lookup(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return value
    return None


def env_str(default: str, *names: str) -> str:
    """First non-empty environment variable among ``names``, else ``default``.

    Names are tried in order so that an ``MXASYNC_*`` knob can sit in front of
    the MXNet name users already know.
    """
    value = _lookup(names)
    return default if value is None else value


def env_int(default: int, *names: str) -> int:
    value = _lookup(names)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXAsyncError(f"environment variable {names[0]}={value!r} is not an integer") from None


def env_float(default: float, *names: str) -> float:
    value = _lookup(names)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError:
        raise MXAsyncError(f"environment variable {names[0]}={value!r} is not a number") from None


def env_bool(default: bool, *names: str) -> bool:
    value = _lookup(names)
    if value is None:
        return default
    return value.strip().lower() not in ("0", "false", "no", "off", "")
