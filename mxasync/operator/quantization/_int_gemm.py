"""Exact integer products on float BLAS: int8/uint8 matmul and convolution with int32 results.

Why float BLAS is exact here: every product of an int8 (|v| <= 128) and an int8 or uint8
(|v| <= 255) value is an integer of magnitude at most 128 * 255 < 2**15, so any partial sum
over ``k`` terms, in whatever order the BLAS adds them, is an integer of magnitude below
``k * 2**15``.  Float32 holds every integer below 2**24 exactly, float64 every one below 2**53:
so a float32 GEMM is exact for ``k * max|a| * max|b| < 2**24`` (k <= 512 for int8 x uint8), a
float64 GEMM for ``< 2**53`` (k < 2**38, far beyond any layer), and the int32 result is that
exact sum (MXNet's int32 accumulators would wrap beyond 2**31; such layers, k > 65536 at full
scale, are past what MXNet's kernels themselves compute correctly).  Integer matmul in numpy
runs without BLAS and is many times slower, so it is the fallback only past 2**53.
"""

from __future__ import annotations

import numpy as np

from ..kernels._runner import PLAIN
from ..kernels.conv import convolution as convk

_BOUND = {"int8": 128, "uint8": 255, "int32": 2 ** 31}


def exact_float(k: int, a_dtype, b_dtype):
    """The narrowest float dtype whose GEMM over ``k`` terms of ``a`` x ``b`` values is exact, or None."""
    bound = k * _BOUND[np.dtype(a_dtype).name] * _BOUND[np.dtype(b_dtype).name]
    if bound < 2 ** 24:
        return np.float32
    if bound < 2 ** 53:
        return np.float64
    return None


def int_matmul(xp, a, b_t, run=PLAIN):
    """``a @ b_t.T`` of integer arrays (a: (M, K), b_t: (N, K)) as exact int32."""
    ft = exact_float(a.shape[-1], a.dtype, b_t.dtype)
    if ft is None:
        return xp.matmul(a.astype(np.int64), b_t.astype(np.int64).T).astype(np.int32)
    return run.matmul(xp, a.astype(ft), b_t.astype(ft).T).astype(np.int32)


def int_conv(xp, data, weight, conv_kw: dict, run=PLAIN):
    """Convolution of integer ``data`` (N, C, ...) by integer ``weight`` (F, C/G, ...) as exact int32."""
    k = int(np.prod(weight.shape[1:]))
    ft = exact_float(k, data.dtype, weight.dtype) or np.float64  # no layer reaches k * 2**15 >= 2**53
    out = convk.convolution(xp, data.astype(ft), weight.astype(ft), None, run=run, **conv_kw)
    return out.astype(np.int32)
