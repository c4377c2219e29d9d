"""``mx.np``: MXNet's NumPy interface on the engine.

``mx.np.ndarray`` is an array of the engine with NumPy's semantics, and every function here is
an op of the one registry (``_npi_*``), pushed to the engine like any ``mx.nd`` call.

>>> from mxasync import np
>>> x = np.arange(6).reshape(2, 3)
>>> np.sum(x * 2, axis=1)
array([ 6., 24.])
"""

from __future__ import annotations

import numpy as _onp

from . import _internal, fallback, fallback_linalg, linalg, random
from ._api_registry import FUNCS as _FUNCS
from ._api_registry import ND as _ND
from .multiarray import array, ndarray

__all__ = ["ndarray", "array", "linalg", "random", *_FUNCS]

globals().update(vars(_ND))

# NumPy's dtypes and constants, as MXNet re-exports them
bool_ = _onp.bool_
bool = _onp.bool_  # noqa: A001 - MXNet's np.bool
int8, int32, int64, uint8 = _onp.int8, _onp.int32, _onp.int64, _onp.uint8
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
dtype = _onp.dtype
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None
NAN = NaN = _onp.nan
PINF, NINF = _onp.inf, -_onp.inf
PZERO, NZERO = 0.0, -0.0
finfo, iinfo, promote_types, result_type = _onp.finfo, _onp.iinfo, _onp.promote_types, _onp.result_type
__all__ += ["bool_", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "dtype", "pi", "e",
            "inf", "nan", "newaxis", "finfo", "promote_types", "result_type"]

# what MXNet runs with official NumPy, where there is no op (mx.np.fallback)
_FALLBACKS = {n: getattr(fallback, n) for n in [*fallback.__all__, "genfromtxt", "set_printoptions"]
              if n not in _FUNCS and n not in globals()}
globals().update(_FALLBACKS)
__all__ += list(_FALLBACKS)
