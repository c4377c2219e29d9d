"""``_contrib_quantized_pooling``: max / avg pooling of int8 / uint8 data; the range passes through.

Max pooling is exact.  Average pooling sums exactly (float64 on integers) and rounds the mean half
to even into the input's type, as MKLDNN's int8 pooling converts its float average.
"""

from __future__ import annotations

import numpy as np

from ..functional import defop
from ..kernels import pooling as poolk
from ..nn.convolution import PoolingParam, _pool_kw
from ..registry import get_op
from ._scales import saturate
from .quantize import RANGED_OUTPUTS, QuantizedProperty


class _QuantizedPoolingProperty(QuantizedProperty):
    def infer_shape(self, in_shapes):
        _, outs, _ = get_op("Pooling").prepare(**self.params.model_dump()).infer_shape([in_shapes[0]])
        return [in_shapes[0], (1,), (1,)], [outs[0], (1,), (1,)], []


def _quantized_pooling(xp, p, data, lo, hi):
    if p.pool_type not in ("max", "avg"):
        raise ValueError(f"_contrib_quantized_pooling: pool_type={p.pool_type!r}; MXNet quantizes 'max' and 'avg' only")
    kw = _pool_kw(p)
    if p.pool_type == "max":
        out = poolk.pooling(xp, data.astype(np.int16), **kw).astype(data.dtype)
    else:
        out = saturate(xp, poolk.pooling(xp, data.astype(np.float64), **kw), data.dtype)
    return out, lo.copy(), hi.copy()


defop("_contrib_quantized_pooling", param=PoolingParam, base=_QuantizedPoolingProperty, fwd=_quantized_pooling,
      arguments=("data", "min_data", "max_data"), outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="Max or average pooling of quantized data; the range passes through.")
