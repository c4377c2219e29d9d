"""The casts of MXNet's automatic mixed precision: ``amp_cast`` and ``amp_multicast`` (amp_cast.cc).

They touch only the AMP types float16 and float32 (MXNet's bfloat16 has no numpy type here):

* ``amp_cast(data; dtype)``: a float16/float32 input becomes ``dtype``; any other input is passed on unchanged;
* ``amp_multicast(*data; num_outputs, cast_narrow)``: the float16/float32 inputs all become the widest of
  them (the narrowest with ``cast_narrow``); the others are passed on unchanged.

The gradients are cast back to each input's dtype.

>>> import mxasync as mx
>>> a, b = mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float32")
>>> [o.dtype.__name__ for o in mx.nd.amp_multicast(a, b, num_outputs=2)]
['float32', 'float32']
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import DType, OpParam

__all__ = ["AmpCastParam", "AmpMultiCastParam"]

_AMP = (np.dtype(np.float16), np.dtype(np.float32))


class AmpCastParam(OpParam):
    dtype: DType = Field(description="the type float16 and float32 inputs are cast to")


class AmpMultiCastParam(OpParam):
    num_outputs: int = Field(ge=1, description="the number of inputs (and outputs)")
    cast_narrow: bool = Field(False, description="cast to the narrowest of the float16/float32 inputs, not the widest")


def _amp(t) -> bool:
    return t is not None and np.dtype(t) in _AMP


class _AmpCastProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return [in_shapes[0]], [in_shapes[0]], []

    def infer_type(self, in_types):
        t = in_types[0]
        if t is None:
            return [None], [None], []
        return [t], [np.dtype(self.params.dtype) if _amp(t) else t], []


def _amp_cast(xp, p, x):
    return x.astype(p.dtype) if x.dtype in _AMP else x.copy()


class _AmpMultiCastProperty(FunctionalProperty):
    def list_outputs(self):
        return [f"output{i}" for i in range(self.params.num_outputs)]

    def _check(self, n):
        if n != self.params.num_outputs:
            raise self.error(f"got {n} inputs but num_outputs={self.params.num_outputs}")

    def infer_shape(self, in_shapes):
        self._check(len(in_shapes))
        return list(in_shapes), list(in_shapes), []

    def infer_type(self, in_types):
        self._check(len(in_types))
        amp = [np.dtype(t) for t in in_types if _amp(t)]
        if not amp:
            return list(in_types), list(in_types), []
        target = (min if self.params.cast_narrow else max)(amp, key=lambda d: d.itemsize)
        return list(in_types), [target if _amp(t) else t for t in in_types], []


def _amp_multicast(xp, p, *data):
    amp = [x.dtype for x in data if x.dtype in _AMP]
    target = (min if p.cast_narrow else max)(amp, key=lambda d: d.itemsize) if amp else None
    return [x.astype(target) if x.dtype in _AMP else x.copy() for x in data]


def _cast_back(xp, p, og, ins, outs):
    return [g.astype(x.dtype) for g, x in zip(og, ins, strict=True)]


defop("amp_cast", param=AmpCastParam, base=_AmpCastProperty, fwd=_amp_cast, bwd=_cast_back, deps="og,in",
      doc="Casts a float16/float32 ``data`` to ``dtype`` (other types pass unchanged); the gradient is cast back.")
defop("amp_multicast", param=AmpMultiCastParam, base=_AmpMultiCastProperty, var_args="num_outputs",
      args=lambda p: [f"data_{i}" for i in range(p.num_outputs)], fwd=_amp_multicast, bwd=_cast_back,
      deps="og,in", doc="Casts the float16/float32 inputs to the widest (``cast_narrow``: narrowest) of them; "
                        "other types pass unchanged; the gradients are cast back.")
