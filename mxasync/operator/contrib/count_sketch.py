"""``_contrib_count_sketch(data, h, s; out_dim, processing_batch_size=32)`` (MXNet 1.9.1's; only on GPU
there): project the last axis of ``data`` (2-d ``(N, d)`` or 4-d ``(N, C, H, d)``) onto ``out_dim``
buckets, ``out[..., h[i]] += s[i] * data[..., i]``, with ``h`` (bucket indices in ``[0, out_dim)``) and
``s`` (signs, +-1) of shape ``(1, d)`` and data's dtype. ``processing_batch_size`` only chunked MXNet's
GPU launches. The gradient of ``data`` is ``out_grad[..., h[i]] * s[i]``; ``h`` and ``s`` get zero, as
MXNet computes none for them.

>>> import mxasync as mx
>>> x = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
>>> mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]]), out_dim=5).asnumpy()
array([[ 1.2,  0. ,  0. , -2.5,  3.4],
       [ 3.2,  0. ,  0. , -5.7,  6.6]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["CountSketchParam"]


class CountSketchParam(OpParam):
    out_dim: int = Field(ge=1, description="the output dimension (the number of buckets)")
    processing_batch_size: int = Field(32, ge=1, description="how many sketch vectors MXNet's GPU kernel "
                                                            "processed at one time (no effect on the result)")


class _CountSketchProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        data, h, s = in_shapes
        if data is None:
            return list(in_shapes), [None], []
        if len(data) not in (2, 4):
            raise self.error(f"data has shape {tuple(data)}; it must be 2-D (N, d) or 4-D (N, C, H, d)")
        d = data[-1]
        for name, x in (("h", h), ("s", s)):
            if x is not None and (len(x) != 2 or x[1] != d):
                raise self.error(f"{name} has shape {tuple(x)}; it must be (1, {d}), one entry per feature of data")
        return [tuple(data), (1, d), (1, d)], [tuple(data[:-1]) + (self.params.out_dim,)], []

    def infer_type(self, in_types):
        t = in_types[0]
        return [t, t, t], [t], []


def _flat(data):
    return data.reshape(-1, data.shape[-1])


def _count_sketch(xp, p, data, h, s):
    x = _flat(data)
    buckets = h.reshape(-1).astype(xp.int64)
    if buckets.size and (int(buckets.min()) < 0 or int(buckets.max()) >= p.out_dim):
        raise ValueError(f"_contrib_count_sketch: h holds buckets outside [0, {p.out_dim})")
    out = xp.zeros((x.shape[0], p.out_dim), dtype=data.dtype)
    # out[:, b] = sum over the features i hashed to b of s[i] * x[:, i]
    onehot = xp.zeros((x.shape[1], p.out_dim), dtype=data.dtype)
    onehot[xp.arange(x.shape[1]), buckets] = s.reshape(-1)
    out += x @ onehot
    return out.reshape(tuple(data.shape[:-1]) + (p.out_dim,))


def _count_sketch_bwd(xp, p, og, ins, outs):
    data, h, s = ins
    g = og[0].reshape(-1, p.out_dim)[:, h.reshape(-1).astype(xp.int64)] * s.reshape(-1)
    return [g.reshape(data.shape), None, None]


defop("_contrib_count_sketch", param=CountSketchParam, base=_CountSketchProperty, arguments=("data", "h", "s"),
      fwd=_count_sketch, bwd=_count_sketch_bwd, deps="og,in",
      doc="CountSketch of data's last axis onto out_dim buckets: out[..., h[i]] += s[i] * data[..., i]; gradient "
          "to data.")
