"""bfloat16 as a numpy dtype: ``ml_dtypes``' (the type JAX uses), registered with numpy on import.

Importing this module makes ``np.dtype('bfloat16')`` work everywhere in the process; every layer that
names the dtype imports it from here (nothing else in mxasync is imported, so any module may).
MXNet's own Python layer describes bfloat16 as a structured stand-in ``[('bfloat16', '<u2')]``; that
form is accepted wherever a dtype is (:func:`canonical_dtype`) and means the same type.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["bfloat16", "MXNET_BFLOAT16", "canonical_dtype", "is_bfloat16"]

#: the numpy dtype of bfloat16 values (8 exponent bits, 7 mantissa bits)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
#: how MXNet 1.9.1's Python layer spells bfloat16 (``mxnet.ndarray.ndarray._DTYPE_NP_TO_MX``'s key)
MXNET_BFLOAT16 = np.dtype([("bfloat16", np.uint16)])


def canonical_dtype(dtype) -> np.dtype:
    """``np.dtype(dtype)``, with MXNet's structured bfloat16 stand-in read as the real bfloat16."""
    dt = np.dtype(dtype)
    return bfloat16 if dt == MXNET_BFLOAT16 else dt


def is_bfloat16(dtype) -> bool:
    return dtype is not None and np.dtype(dtype) == bfloat16
