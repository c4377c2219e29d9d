"""Pixel shuffles (sub-pixel convolution upsampling): channels ``C * f1 * ... * fk`` become a
``f1 x ... x fk`` block of each output pixel.

>>> import mxasync as mx
>>> PixelShuffle1D(2)(mx.nd.arange(6).reshape((1, 2, 3))).asnumpy().tolist()
[[[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]]]
"""

from __future__ import annotations

from ...block import HybridBlock

__all__ = ["PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


def _factors(factor, n, name):
    try:
        factors = (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
    if len(factors) != n:
        raise ValueError(f"{name}: wrong length {len(factors)} of factor {factor}, expected {n}")
    return factors


class _PixelShuffle(HybridBlock):
    _ndim = 1

    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self._factors = _factors(factor, self._ndim, type(self).__name__)

    def hybrid_forward(self, F, x):
        k, f = self._ndim, self._factors
        # (N, C*f1*..*fk, *S) -> (N, C, f1, .., fk, *S) -> (N, C, S1, f1, .., Sk, fk) -> (N, C, S1*f1, ..)
        x = F.reshape(x, (0, -4, -1, _prod(f)) + (0,) * k)
        for i in range(k - 1):
            x = F.reshape(x, (0,) * (2 + i) + (-4, f[i], _prod(f[i + 1:])) + (0,) * k)
        axes = (0, 1) + tuple(a for i in range(k) for a in (2 + k + i, 2 + i))
        x = F.transpose(x, axes=axes)
        return F.reshape(x, (0, 0) + (-3,) * k)

    def __repr__(self) -> str:
        factor = self._factors[0] if self._ndim == 1 else self._factors
        return f"{type(self).__name__}({factor})"


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


class PixelShuffle1D(_PixelShuffle):
    """``(N, C*f, W) -> (N, C, W*f)``."""

    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """``(N, C*f1*f2, H, W) -> (N, C, H*f1, W*f2)``."""

    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """``(N, C*f1*f2*f3, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``."""

    _ndim = 3
