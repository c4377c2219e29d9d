"""Reductions: sum, mean, max, min, prod, nansum, nanprod, norm (axis/keepdims/exclude), argmax, argmin.

>>> from mxasync.operator import get_op
>>> get_op("sum").prepare(axis="(1,)", keepdims="True").infer_shape([(2, 3, 4)])[1]
[(2, 1, 4)]
>>> get_op("mean").prepare(axis=1, exclude=True).infer_shape([(2, 3, 4)])[1]
[(3,)]
"""

from __future__ import annotations

from typing import ClassVar, Literal, Optional

from .._util import norm_axes, prod, reduce_axes
from ..functional import FunctionalProperty, defop
from ..params import OpParam, OptShape

__all__ = ["REDUCE_OPS"]


class ReduceParam(OpParam):
    axis: OptShape = None
    keepdims: bool = False
    exclude: bool = False


class NormParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("ord", "axis", "out_dtype", "keepdims")  # MXNet's
    ord: Literal[1, 2] = 2
    axis: OptShape = None
    keepdims: bool = False
    out_dtype: Optional[str] = None


class ArgParam(OpParam):
    axis: Optional[int] = None
    keepdims: bool = False


class _ReduceProperty(FunctionalProperty):
    def axes(self, ndim: int) -> tuple[int, ...]:
        return norm_axes(self, self.params.axis, ndim, getattr(self.params, "exclude", False))

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        p = self.params
        _, out = reduce_axes(self, s, p.axis, p.keepdims, getattr(p, "exclude", False))
        return [s], [out], []


def _expand(xp, g, shape, axes):
    """Reshape a reduced gradient so it broadcasts back to ``shape``."""
    kshape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return g.reshape(kshape)


def _axes(p, x):
    return norm_axes(None, p.axis, x.ndim, getattr(p, "exclude", False))


def _sum_bwd(scale):
    def bwd(xp, p, og, ins, outs):
        x = ins[0]
        axes = _axes(p, x)
        g = _expand(xp, og[0], x.shape, axes)
        if scale:
            g = g / max(1, prod(x.shape[a] for a in axes))
        return [xp.broadcast_to(g, x.shape)]

    return bwd


def _minmax_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x)
    y = _expand(xp, outs[0], x.shape, axes)
    return [_expand(xp, og[0], x.shape, axes) * (x == y)]


def _prod_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x)
    return [_expand(xp, og[0], x.shape, axes) * _expand(xp, outs[0], x.shape, axes) / x]


def _nansum_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x)
    return [_expand(xp, og[0], x.shape, axes) * ~xp.isnan(x)]


def _nanprod_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x)
    return [xp.where(xp.isnan(x), 0, _expand(xp, og[0] * outs[0], x.shape, axes) / x)]


def _norm_fwd(xp, p, x):
    axes = _axes(p, x)
    if p.ord == 1:
        return xp.abs(x).sum(axis=axes, keepdims=p.keepdims)
    return xp.sqrt(xp.square(x).sum(axis=axes, keepdims=p.keepdims))


def _norm_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x)
    g = _expand(xp, og[0], x.shape, axes)
    if p.ord == 1:
        return [g * xp.sign(x)]
    y = _expand(xp, outs[0], x.shape, axes)
    return [g * x / xp.where(y == 0, 1, y)]


def _red(fn):
    return lambda xp, p, x: getattr(xp, fn)(x, axis=_axes(p, x), keepdims=p.keepdims)


def _acc_red(fn):
    """A sum or product that accumulates in the input's integer dtype, wrapping around as MXNet's
    does (numpy would promote int8 to int64 and the result would not fit back)."""
    def fwd(xp, p, x):
        dtype = x.dtype if x.dtype.kind in "iu" else None
        return getattr(xp, fn)(x, axis=_axes(p, x), keepdims=p.keepdims, dtype=dtype)

    return fwd


def _mean_fwd(xp, p, x):
    if x.dtype.kind not in "iu":
        return xp.mean(x, axis=_axes(p, x), keepdims=p.keepdims)
    # MXNet: the sum wraps in the dtype, then integer division truncates toward zero
    axes = _axes(p, x)
    n = max(1, prod(x.shape[a] for a in axes))
    s = xp.sum(x, axis=axes, keepdims=p.keepdims, dtype=x.dtype).astype(xp.int64)
    q = s // n
    q = q + ((s % n != 0) & (s < 0))
    return q.astype(x.dtype)


# name: (forward, backward, aliases)
REDUCE_OPS = {
    "sum": (_acc_red("sum"), _sum_bwd(False), ("sum_axis",)),
    "mean": (_mean_fwd, _sum_bwd(True), ()),
    "max": (_red("max"), _minmax_bwd, ("max_axis",)),
    "min": (_red("min"), _minmax_bwd, ("min_axis",)),
    "prod": (_acc_red("prod"), _prod_bwd, ()),
    "nansum": (_acc_red("nansum"), _nansum_bwd, ()),
    "nanprod": (_acc_red("nanprod"), _nanprod_bwd, ()),
}

for _name, (_f, _b, _al) in REDUCE_OPS.items():
    defop(_name, fwd=_f, bwd=_b, param=ReduceParam, base=_ReduceProperty, aliases=_al,
          deps="og" if _name in ("sum", "mean") else "og,in,out", linear_input=_name in ("sum", "mean"),
          doc=f"{_name} over ``axis`` (all axes when None; the complement with ``exclude=True``).")

defop("norm", fwd=_norm_fwd, bwd=_norm_bwd, param=NormParam, base=_ReduceProperty,
      doc="The L1 or L2 norm over ``axis`` (all elements when None).")


class _ArgProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        p = self.params
        if p.axis is None:
            return [s], [(1,) * len(s) if p.keepdims else (1,)], []
        _, out = reduce_axes(self, s, p.axis, p.keepdims)
        return [s], [out], []


def _arg(fn):
    def fwd(xp, p, x):
        if p.axis is None:
            return getattr(xp, fn)(x.reshape(-1), keepdims=True).astype(x.dtype)
        return getattr(xp, fn)(x, axis=p.axis, keepdims=p.keepdims).astype(x.dtype)

    return fwd


for _name in ("argmax", "argmin"):
    defop(_name, fwd=_arg(_name), bwd=lambda xp, p, og, ins, outs: [None], param=ArgParam, base=_ArgProperty,
          deps="og", zero_gradient=True, doc=f"Index of the {_name[3:]}imum along ``axis``, as the input's dtype (MXNet's rule).")


# -- argmax_channel -------------------------------------------------------------------------------
class _ArgmaxChannelProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if len(s) < 2:
            raise self.error(f"data has shape {tuple(s)}; it needs at least 2 dimensions (the channel axis is 1)")
        return [s], [tuple(s[:1]) + tuple(s[2:])], []


defop("argmax_channel", base=_ArgmaxChannelProperty, deps="og",
      fwd=lambda xp, p, x: xp.argmax(x, axis=1).astype(x.dtype), bwd=lambda xp, p, og, ins, outs: [None],
      doc="Index of the maximum along axis 1 (the first one on ties), as the input's dtype; the gradient is zero.")
