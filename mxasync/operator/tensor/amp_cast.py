"""The casts of MXNet's automatic mixed precision: ``amp_cast`` and ``amp_multicast`` (amp_cast.h).

They touch only the AMP types float16, bfloat16 and float32:

* ``amp_cast(data; dtype)``: an AMP-typed input becomes ``dtype``; any other input is passed on unchanged;
* ``amp_multicast(*data; num_outputs, cast_narrow)``: the AMP-typed inputs all become one type, MXNet's
  rule: float32 when any input is float32, else the first input's type; with ``cast_narrow``, float16
  (or bfloat16) when any input has it, else float32.  The others are passed on unchanged.

The gradients are cast back to each input's dtype.

>>> import mxasync as mx
>>> a, b = mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float32")
>>> [o.dtype.__name__ for o in mx.nd.amp_multicast(a, b, num_outputs=2)]
['float32', 'float32']
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..._bfloat16 import bfloat16
from ..functional import FunctionalProperty, defop
from ..params import DType, OpParam

__all__ = ["AmpCastParam", "AmpMultiCastParam", "AMP_TYPES"]

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
#: the types the AMP casts change; every other type passes through them
AMP_TYPES = (_F16, _F32, bfloat16)


class AmpCastParam(OpParam):
    dtype: DType = Field(description="the type float16, bfloat16 and float32 inputs are cast to")


class AmpMultiCastParam(OpParam):
    num_outputs: int = Field(ge=1, description="the number of inputs (and outputs)")
    cast_narrow: bool = Field(False, description="cast to the narrowest of the AMP-typed inputs, not the widest")


def _amp(t) -> bool:
    return t is not None and np.dtype(t) in AMP_TYPES


def multicast_target(types: list, cast_narrow: bool):
    """The one type amp_multicast gives its AMP-typed inputs (MXNet's AMPMultiCastType), or None if unknown."""
    if cast_narrow:
        found = [np.dtype(t) for t in types if _amp(t) and np.dtype(t) != _F32]
        return found[-1] if found else _F32
    if any(_amp(t) and np.dtype(t) == _F32 for t in types):
        return _F32
    return np.dtype(types[0]) if types and types[0] is not None else None


class _AmpCastProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return [in_shapes[0]], [in_shapes[0]], []

    def infer_type(self, in_types):
        t = in_types[0]
        if t is None:
            return [None], [None], []
        return [t], [np.dtype(self.params.dtype) if _amp(t) else t], []


def _amp_cast(xp, p, x):
    return x.astype(p.dtype) if x.dtype in AMP_TYPES else x.copy()


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
        target = multicast_target(in_types, self.params.cast_narrow)
        return list(in_types), [target if _amp(t) else t for t in in_types], []


def _amp_multicast(xp, p, *data):
    target = multicast_target([x.dtype for x in data], p.cast_narrow)
    return [x.astype(target) if x.dtype in AMP_TYPES else x.copy() for x in data]


def _cast_back(xp, p, og, ins, outs):
    return [g.astype(x.dtype) for g, x in zip(og, ins, strict=True)]


defop("amp_cast", param=AmpCastParam, base=_AmpCastProperty, fwd=_amp_cast, bwd=_cast_back, deps="og,in",
      doc="Casts a float16/bfloat16/float32 ``data`` to ``dtype`` (other types pass unchanged); the gradient "
          "is cast back.")
defop("amp_multicast", param=AmpMultiCastParam, base=_AmpMultiCastProperty, var_args="num_outputs",
      args=lambda p: [f"data_{i}" for i in range(p.num_outputs)], fwd=_amp_multicast, bwd=_cast_back,
      deps="og,in", doc="Casts the float16/bfloat16/float32 inputs to one type (float32 if any is, else the first "
                        "input's; ``cast_narrow``: the narrowest); other types pass unchanged; the gradients are "
                        "cast back.")
