"""``mx.np._internal``: MXNet's internal NumPy-interface functions that its own code and tests call.

>>> from mxasync import np
>>> a = np.zeros((2, 2))
>>> np._internal.boolean_mask_assign_scalar(a, np.array([True, False]), 1.0, out=a).tolist()
[[1.0, 1.0], [0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

from .multiarray import F as _F

__all__ = ["boolean_mask_assign_scalar", "boolean_mask_assign_tensor"]


def boolean_mask_assign_scalar(data, mask, value, start_axis=0, out=None) -> Any:
    """``data`` with ``data[mask] = value`` (the mask's axes from ``start_axis``), into ``out``."""
    return _F.op("_npi_boolean_mask_assign", [data, mask], out=out, scalar=float(value), start_axis=int(start_axis))


def boolean_mask_assign_tensor(data, mask, value, start_axis=0, out=None) -> Any:
    """``data`` with ``data[mask] = value`` for an array ``value``, into ``out``."""
    return _F.op("_npi_boolean_mask_assign", [data, mask, value], out=out, start_axis=int(start_axis))
