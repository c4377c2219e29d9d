"""``_contrib_fft`` and ``_contrib_ifft`` (MXNet 1.9.1's; only on GPU there, through cuFFT), over the
last axis of 2-d ``(N, d)`` or 4-d ``(N, C, H, d)`` data, complex numbers stored interleaved
``[re0, im0, re1, im1, ...]``:

* ``fft``: real ``(..., d)`` -> the unnormalised DFT ``(..., 2d)``;
* ``ifft``: interleaved complex ``(..., 2d)`` -> the real part of the unnormalised inverse DFT
  ``(..., d)`` (no division by ``d``, as MXNet: ``ifft(fft(x)) == d * x``).

``compute_size`` (default 128) only sized MXNet's cuFFT batches; it has no effect on the result.
Each gradient is the other transform (the adjoint), as MXNet's backward computes it.

>>> import mxasync as mx
>>> mx.nd.contrib.fft(mx.nd.array([[1, 2, 3, 4]])).asnumpy()
array([[10.,  0., -2.,  2., -2.,  0., -2., -2.]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["FFTParam"]


class FFTParam(OpParam):
    compute_size: int = Field(128, ge=1, description="the sub-batch MXNet's cuFFT plan ran at once (no effect "
                                                    "on the result)")


class _FFTProperty(FunctionalProperty):
    factor = 2  # the output's last axis over the input's (ifft: 1/2)

    def infer_shape(self, in_shapes):
        (data,) = in_shapes
        if data is None:
            return [None], [None], []
        if len(data) not in (2, 4):
            raise self.error(f"data has shape {tuple(data)}; it must be 2-D or 4-D (the transform runs over the "
                             "last axis)")
        if self.factor < 1 and data[-1] % 2:
            raise self.error(f"data's last axis has {data[-1]} values; interleaved complex numbers need an even count")
        return [tuple(data)], [tuple(data[:-1]) + (int(data[-1] * self.factor),)], []


class _IFFTProperty(_FFTProperty):
    factor = 0.5


def _interleave(xp, z, dtype):
    out = xp.empty(z.shape[:-1] + (2 * z.shape[-1],), dtype=dtype)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag
    return out


def _complex(x):
    return x[..., 0::2] + 1j * x[..., 1::2]


def _fft(xp, p, x):
    return _interleave(xp, xp.fft.fft(x, axis=-1), x.dtype)


def _ifft(xp, p, x):
    z = _complex(x)
    return (xp.fft.ifft(z, axis=-1) * z.shape[-1]).real.astype(x.dtype)


def _fft_bwd(xp, p, og, ins, outs):
    z = _complex(og[0])
    return [(xp.fft.ifft(z, axis=-1) * z.shape[-1]).real.astype(og[0].dtype)]


def _ifft_bwd(xp, p, og, ins, outs):
    return [_interleave(xp, xp.fft.fft(og[0], axis=-1), og[0].dtype)]


defop("_contrib_fft", param=FFTParam, base=_FFTProperty, fwd=_fft, bwd=_fft_bwd, deps="og",
      doc="The unnormalised DFT of the last axis of real 2-D or 4-D data, complex values interleaved (re, im) in "
          "an axis twice as long.")
defop("_contrib_ifft", param=FFTParam, base=_IFFTProperty, fwd=_ifft, bwd=_ifft_bwd, deps="og",
      doc="The real part of the unnormalised inverse DFT of interleaved complex data (last axis 2d -> d); "
          "ifft(fft(x)) is d * x, as in MXNet.")
