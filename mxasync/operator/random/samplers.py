"""Random samplers: _random_uniform, _random_normal, _random_randint (RANDOM resource).

They draw from the context's seeded generator (``op_ctx.requested[0]``), so
``mx.random.seed(n)`` makes runs repeat.

>>> from mxasync.operator import get_op
>>> p = get_op("random_uniform").prepare(shape=(2, 3))
>>> p.infer_shape([]), p.infer_type([])
(([], [(2, 3)], []), ([], ['float32'], []))
"""

from __future__ import annotations

from typing import Optional

from ...base import MXAsyncError
from ...runtime.resource import ResourceRequest
from ..base import assign
from ..functional import FunctionalOperator, FunctionalProperty, defop
from ..params import DType, OpParam, OutShape

__all__: list[str] = []


class _SamplerOperator(FunctionalOperator):
    """Draws as many samples as the planned output holds: a graph may have given it the shape."""

    __slots__ = ()

    def forward(self, op_ctx, in_data, req, out_data, aux):
        p = self.prop.params
        shape = tuple(out_data[0].shape)
        if tuple(p.shape) == shape:
            return super().forward(op_ctx, in_data, req, out_data, aux)
        assign(out_data[0], req[0], self.fwd(self.xp, p.model_copy(update={"shape": shape}), op_ctx))


class _SamplerProperty(FunctionalProperty):
    arguments = ()
    default_dtype = "float32"

    def infer_shape(self, in_shapes):
        # MXNet 1.x: shape () is unknown; in a graph the consumers give it (mx.sym.random.normal() + x)
        shape = tuple(self.params.shape)
        return [], [shape or None], []

    def create_operator(self, ctx):
        op = super().create_operator(ctx)
        return _SamplerOperator(self, op.xp, op.fwd, op.bwd)

    def infer_type(self, in_types):
        dt = self.params.dtype
        return [], [self.default_dtype if dt in (None, "None") else dt], []


class UniformParam(OpParam):
    low: float = 0.0
    high: float = 1.0
    shape: OutShape = ()
    ctx: str = ""
    dtype: Optional[DType] = None


class NormalParam(OpParam):
    loc: float = 0.0
    scale: float = 1.0
    shape: OutShape = ()
    ctx: str = ""
    dtype: Optional[DType] = None


class RandIntParam(OpParam):
    low: int
    high: int
    shape: OutShape = ()
    ctx: str = ""
    dtype: Optional[DType] = None


def _rng(op_ctx):
    return op_ctx.requested[0].get_random()


def _dt(p, default="float32"):
    return default if p.dtype in (None, "None") else p.dtype


def _normal(xp, p, op_ctx):
    # checked when the op runs, so a bad scale surfaces at the next sync point as in MXNet
    if p.scale < 0:
        raise MXAsyncError(f"_random_normal: scale must be >= 0, got {p.scale}")
    return (p.loc + p.scale * xp.asarray(_rng(op_ctx).standard_normal(p.shape))).astype(_dt(p))


defop("_random_uniform", param=UniformParam, base=_SamplerProperty, arguments=(), wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("random_uniform", "uniform"),
      fwd=lambda xp, p, op_ctx: (p.low + (p.high - p.low) * xp.asarray(_rng(op_ctx).random(p.shape))).astype(_dt(p)),
      doc="Samples from U[low, high).")
defop("_random_normal", param=NormalParam, base=_SamplerProperty, arguments=(), wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("random_normal", "normal"),
      fwd=lambda xp, p, op_ctx: _normal(xp, p, op_ctx), doc="Samples from N(loc, scale**2).")
defop("_random_randint", param=RandIntParam, base=_SamplerProperty, arguments=(), wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("random_randint",), default_dtype="int32",
      fwd=lambda xp, p, op_ctx: xp.asarray(_rng(op_ctx).integers(p.low, p.high, size=p.shape)).astype(_dt(p, "int32")),
      doc="Integers sampled uniformly from [low, high).")
