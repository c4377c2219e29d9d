"""Creation ops without inputs: _zeros, _ones, _full, _arange, _linspace, _eye.

``mx.nd.zeros``/``ones``/``full``/``arange`` are Python functions; these are
the ops behind ``mx.sym.zeros`` and friends in MXNet graphs (their JSON names
the ops ``_zeros``, ``_arange``...).  ``ctx`` is accepted and recorded, as in
MXNet's JSON; the caller decides where the array lives.

>>> from mxasync.operator import get_op
>>> get_op("_arange").prepare(start=2, stop=7, step=2, repeat=2).infer_shape([])
([], [(6,)], [])
>>> get_op("_full").prepare(shape=(2,), value=3.5).infer_type([])
([], ['float32'], [])
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import DType, Field, OpParam, OutShape

__all__ = ["InitParam", "FullParam", "ArangeParam", "LinspaceParam", "EyeParam", "arange_length", "arange_values"]


class InitParam(OpParam):
    shape: OutShape = ()
    ctx: str = ""
    dtype: DType = "float32"


class FullParam(InitParam):
    value: float


class ArangeParam(OpParam):
    start: float
    stop: Optional[float] = None
    step: float = 1.0
    repeat: int = 1
    infer_range: bool = False
    ctx: str = ""
    dtype: DType = "float32"


class LinspaceParam(OpParam):
    start: float = Field(description="the first value")
    stop: float = Field(description="the last value (excluded without ``endpoint``)")
    num: int = Field(ge=0, description="how many values")
    endpoint: bool = Field(True, description="include ``stop``")
    ctx: str = ""
    dtype: DType = "float32"


class EyeParam(OpParam):
    N: int
    M: int = 0
    k: int = 0
    ctx: str = ""
    dtype: DType = "float32"


def arange_length(p: ArangeParam) -> int:
    """How many values ``_arange`` makes (before ``repeat``)."""
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    if p.step == 0:
        raise ValueError("_arange: step must not be 0")
    return max(0, math.ceil((stop - start) / p.step))


class _InitProperty(FunctionalProperty):
    arguments = ()

    def out_shape(self):
        return tuple(self.params.shape)

    def infer_shape(self, in_shapes):
        # -1 is an unknown size (MXNet's legacy shapes): 0 in our partial shapes, filled in by
        # backward inference from the consumers (``ones(shape=(-1, -1)) + ...``)
        return [], [tuple(0 if d == -1 else d for d in self.out_shape())], []

    def infer_type(self, in_types):
        return [], [self.params.dtype], []


class _LinspaceProperty(_InitProperty):
    def out_shape(self):
        return (self.params.num,)


class _ArangeProperty(_InitProperty):
    def out_shape(self):
        try:
            return (arange_length(self.params) * self.params.repeat,)
        except ValueError as exc:
            raise self.error(str(exc).split(": ", 1)[1]) from None


class _EyeProperty(_InitProperty):
    def out_shape(self):
        return (self.params.N, self.params.M or self.params.N)


def arange_values(xp, start: float, step: float, count: int, repeat: int, dtype) -> Any:
    """MXNet's ``start + (i // repeat) * step`` for ``count * repeat`` values of ``dtype``: for an integer
    dtype, start and step are made integers first (``arange(1.3, 10, 1.3, dtype='int32')`` is 1, 2, 3, ...),
    and the values wrap around in the dtype."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        v = int(start) + int(step) * xp.arange(count, dtype="int64")
    else:  # computed in the dtype, as MXNet's kernel does
        v = dt.type(start) + xp.arange(count, dtype=dt) * dt.type(step)
    if repeat > 1:
        v = xp.repeat(v, repeat)
    return v.astype(dtype)


def _arange(xp, p):
    start = 0.0 if p.stop is None else p.start
    return arange_values(xp, start, p.step, arange_length(p), p.repeat, p.dtype)


_NO_INPUTS = dict(arguments=(), deps="", bwd=None)
# a constant fill is written as a 0-d value broadcast into the output: in a graph the output's shape may be
# known only from its consumers (MXNet's ``zeros((0, 16))``, the begin states of RNN cells)
defop("_zeros", param=InitParam, base=_InitProperty, fwd=lambda xp, p: xp.zeros((), dtype=p.dtype),
      doc="An array of zeros of ``shape`` and ``dtype``.", **_NO_INPUTS)
defop("_ones", param=InitParam, base=_InitProperty, fwd=lambda xp, p: xp.ones((), dtype=p.dtype),
      doc="An array of ones of ``shape`` and ``dtype``.", **_NO_INPUTS)
defop("_full", param=FullParam, base=_InitProperty, fwd=lambda xp, p: xp.full((), p.value, dtype=p.dtype),
      doc="An array of ``shape`` filled with ``value``.", **_NO_INPUTS)
defop("_arange", param=ArangeParam, base=_ArangeProperty, fwd=_arange,
      doc="Evenly spaced values in [start, stop) by ``step`` ([0, start) without stop), each repeated "
          "``repeat`` times.", **_NO_INPUTS)
defop("_linspace", param=LinspaceParam, base=_LinspaceProperty,
      fwd=lambda xp, p: xp.linspace(p.start, p.stop, p.num, endpoint=p.endpoint).astype(p.dtype),
      doc="``num`` evenly spaced values from ``start`` to ``stop`` (``stop`` excluded unless ``endpoint``).",
      **_NO_INPUTS)
defop("_eye", param=EyeParam, base=_EyeProperty,
      fwd=lambda xp, p: xp.eye(p.N, p.M or p.N, p.k, dtype=p.dtype),
      doc="An N x M (M=0: N x N) array with ones on diagonal ``k``.", **_NO_INPUTS)
