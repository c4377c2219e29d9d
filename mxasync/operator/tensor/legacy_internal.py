"""Internal ops of MXNet 1.9.1 that its own Python code and graphs name: ``_zeros_without_dtype`` (the zeros
MXNet's executor writes into graphs, ``dtype`` an enum code with -1 for "unspecified", float32 here) and
``_onehot_encode(lhs, rhs)`` (the legacy ``mx.nd.onehot_encode(indices, out)``: ``rhs`` only gives the
output's shape and dtype; no gradient).

>>> import mxasync as mx
>>> mx.nd._internal._onehot_encode(mx.nd.array([2, 0]), mx.nd.zeros((2, 3))).asnumpy()
array([[0., 0., 1.],
       [1., 0., 0.]], dtype=float32)
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam, Shape
from .init import _InitProperty

__all__ = ["ZerosWithoutDTypeParam"]

#: MXNet's dtype enum (mshadow's type flags)
_CODES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8", 6: "int64", 7: "bool",
          12: "bfloat16"}


def _dtype_code(v: Any) -> Any:
    if isinstance(v, str) and v.lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, int):
        return "float32" if v == -1 else _CODES.get(v, v)
    return v if v is None or isinstance(v, str) else np.dtype(v).name


class ZerosWithoutDTypeParam(OpParam):
    shape: Shape = ()
    ctx: str = ""
    dtype: Annotated[str, BeforeValidator(_dtype_code)] = Field(
        "float32", description="the output data type: a name or MXNet's enum code, -1 (unspecified) as float32")


class _OneHotEncodeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        lhs, rhs = in_shapes
        if lhs is not None and rhs is not None and (len(rhs) != 2 or tuple(lhs) != (rhs[0],)):
            raise self.error(f"indices of shape {tuple(lhs)} need out of shape ({lhs[0] if len(lhs) else 'N'}, "
                             f"depth), got {tuple(rhs)}")
        return list(in_shapes), [rhs], []

    def infer_type(self, in_types):
        return list(in_types), [in_types[1]], []


def _onehot_encode(xp, p, lhs, rhs):
    out = xp.zeros(rhs.shape, dtype=rhs.dtype)
    out[xp.arange(rhs.shape[0]), lhs.astype(np.int64)] = 1
    return out


defop("_zeros_without_dtype", param=ZerosWithoutDTypeParam, base=_InitProperty, arguments=(), deps="", bwd=None,
      fwd=lambda xp, p: xp.zeros((), dtype=p.dtype),
      doc="Zeros of ``shape``; ``dtype`` -1 (MXNet's unspecified) gives float32.")
defop("_onehot_encode", base=_OneHotEncodeProperty, arguments=("lhs", "rhs"), fwd=_onehot_encode,
      non_differentiable=True, doc="The legacy one-hot encoding: row i of an array shaped like rhs has a 1 at "
                                   "column lhs[i], zeros elsewhere.")
