"""NumPy 1's removed names, put back on request for legacy MXNet-era scripts (``np.float``, ``np.int``,
``np.object``, ``np.bool``, binary ``np.fromstring``, ...).

Never on by default and never from ``import mxasync``: the ``mxnet`` alias turns it on when
``MXASYNC_NUMPY1_NAMES=1`` is set (``mxasync run --numpy1-names script.py`` sets it), for that process.
Each use of a restored name warns (:class:`NumPy1NameWarning`, shown once per line of code), naming the
name and what it stands for, so the script can be fixed.

>>> import numpy as np
>>> enabled()
False
"""

from __future__ import annotations

import builtins
import os
import warnings
from typing import Any

import numpy as np

__all__ = ["ENV", "NumPy1NameWarning", "enable", "disable", "enabled", "requested"]

#: the environment variable the ``mxnet`` alias reads
ENV = "MXASYNC_NUMPY1_NAMES"


class NumPy1NameWarning(UserWarning):
    """A name NumPy 2 removed was used and given back by ``--numpy1-names``."""


def _asscalar(a):
    return a.item()


def _msort(a):
    return np.sort(a, axis=0)


# name -> (value, what it is in NumPy 2); only names the installed NumPy lacks are restored
_REMOVED: dict[str, tuple[Any, str]] = {
    "float": (builtins.float, "float"), "int": (builtins.int, "int"), "object": (builtins.object, "object"),
    "bool": (builtins.bool, "bool"), "complex": (builtins.complex, "complex"), "str": (builtins.str, "str"),
    "unicode": (builtins.str, "str"), "float_": (np.float64, "np.float64"), "complex_": (np.complex128, "np.complex128"),
    "unicode_": (np.str_, "np.str_"), "string_": (np.bytes_, "np.bytes_"), "bool8": (np.bool_, "np.bool_"),
    "int0": (np.intp, "np.intp"), "uint0": (np.uintp, "np.uintp"), "NaN": (np.nan, "np.nan"), "Inf": (np.inf, "np.inf"),
    "PINF": (np.inf, "np.inf"), "NINF": (-np.inf, "-np.inf"), "infty": (np.inf, "np.inf"),
    "Infinity": (np.inf, "np.inf"), "NZERO": (-0.0, "-0.0"), "PZERO": (0.0, "0.0"),
    "product": (np.prod, "np.prod"), "cumproduct": (np.cumprod, "np.cumprod"), "sometrue": (np.any, "np.any"),
    "alltrue": (np.all, "np.all"), "round_": (np.round, "np.round"), "asscalar": (_asscalar, "a.item()"),
    "msort": (_msort, "np.sort(a, axis=0)"),
}

_state: dict[str, Any] = {"on": False, "getattr": None, "fromstring": None, "names": {}}


def requested() -> bool:
    """Whether ``MXASYNC_NUMPY1_NAMES`` asks for the names (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")


def enabled() -> bool:
    return _state["on"]


def _numpy_getattr(name: str):
    restored = _state["names"].get(name)
    if restored is not None:
        value, spelling = restored
        warnings.warn(f"np.{name} was removed in NumPy 2; --numpy1-names ({ENV}) gives it back as {spelling}: "
                      f"write {spelling}", NumPy1NameWarning, stacklevel=2)
        return value
    original = _state["getattr"]
    if original is not None:
        return original(name)
    raise AttributeError(f"module 'numpy' has no attribute {name!r}")


def _fromstring(string, dtype=float, count=-1, *, sep="", **kwargs):
    if sep == "":
        warnings.warn("np.fromstring's binary mode was removed in NumPy 2; --numpy1-names "
                      f"({ENV}) reads it with np.frombuffer: write np.frombuffer(...).copy()", NumPy1NameWarning,
                      stacklevel=2)
        data = string.encode("latin-1") if isinstance(string, str) else string
        return np.frombuffer(data, dtype=dtype, count=count).copy()
    return _state["fromstring"](string, dtype=dtype, count=count, sep=sep, **kwargs)


def enable() -> None:
    """Give NumPy back the NumPy 1 names it lacks (for this process), each use warning."""
    if _state["on"]:
        return
    present = set(dir(np))
    _state["names"] = {k: v for k, v in _REMOVED.items() if k not in present}
    _state["getattr"] = np.__dict__.get("__getattr__")
    np.__getattr__ = _numpy_getattr
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        _state["fromstring"] = np.fromstring
        np.fromstring = _fromstring
    _state["on"] = True


def disable() -> None:
    """Undo :func:`enable`."""
    if not _state["on"]:
        return
    if _state["getattr"] is not None:
        np.__getattr__ = _state["getattr"]
    else:
        del np.__getattr__
    if _state["fromstring"] is not None:
        np.fromstring = _state["fromstring"]
    _state.update(on=False, getattr=None, fromstring=None, names={})
