"""MXNet's dtype codes (the ``type_flag`` of its files and C API) and grad_req codes, as
``mx.nd.ndarray._DTYPE_NP_TO_MX`` / ``_DTYPE_MX_TO_NP`` / ``_GRAD_REQ_MAP`` give them."""

from __future__ import annotations

import numpy as np

from .._bfloat16 import MXNET_BFLOAT16, bfloat16

__all__ = ["_DTYPE_NP_TO_MX", "_DTYPE_MX_TO_NP", "_GRAD_REQ_MAP"]

# bfloat16 is ml_dtypes' type; MXNet's structured stand-in maps to the same code, so code that looks
# up MXNet's spelling still finds it (12 maps back to the real type)
_DTYPE_NP_TO_MX = {None: -1, np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4, np.int8: 5,
                   np.int64: 6, np.bool_: 7, MXNET_BFLOAT16: 12, bfloat16.type: 12}
_DTYPE_MX_TO_NP = {code: dtype for dtype, code in _DTYPE_NP_TO_MX.items() if dtype is not MXNET_BFLOAT16}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}
