"""``npx.save`` / ``npx.load`` / ``npx.savez``: MXNet's NDArray files (V3, NumPy shapes) of ``mx.np`` arrays."""

from __future__ import annotations

from typing import Any

from ..ndarray import save as _nd_save
from ..ndarray._save_load import load_any as _nd_load
from ..numpy.multiarray import F as _F
from ..util import np_shape

__all__ = ["save", "load", "savez"]


def save(file: str, arr: Any) -> None:
    """Save one array, a list or a dict of ``mx.np`` arrays (MXNet's format, NumPy shapes)."""
    with np_shape(True):
        _nd_save(file, arr)


def savez(file: str, *args: Any, **kwargs: Any) -> None:
    data = {f"arr_{i}": a for i, a in enumerate(args)}
    data.update(kwargs)
    save(file, data)


def load(file: str) -> Any:
    """Load what :func:`save` wrote (or ``mx.nd.save``: files of either shape semantics); arrays come back
    as ``mx.np.ndarray``."""
    res = _nd_load(file)
    if isinstance(res, dict):
        return {k: _F.wrap(v) for k, v in res.items()}
    return _F.wrap(res)
