"""Indexing ops: take, Embedding, one_hot, where.

>>> from mxasync.operator import get_op
>>> get_op("Embedding").prepare(input_dim=10, output_dim=4).infer_shape([(2, 3), None])
([(2, 3), (10, 4)], [(2, 3, 4)], [])
"""

from __future__ import annotations

from typing import Literal

from ...util import is_np_shape
from .._util import norm_axes
from ..functional import FunctionalProperty, defop
from ..params import DType, Field, OpParam
from ..sparse.kernels import put_rows, row_sums, take_rows

__all__: list[str] = []


class TakeParam(OpParam):
    axis: int = 0
    mode: Literal["clip", "wrap", "raise"] = "clip"


def _take_idx(xp, p, idx, n):
    idx = idx.astype("int64")
    return xp.mod(idx, n) if p.mode == "wrap" else xp.clip(idx, 0, n - 1)


def _take_fwd(xp, p, a, idx):
    ax = p.axis % a.ndim
    return xp.take(a, _take_idx(xp, p, idx, a.shape[ax]), axis=ax)


def _take_bwd(xp, p, og, ins, outs):
    a, idx = ins
    ax = p.axis % a.ndim
    i = _take_idx(xp, p, idx, a.shape[ax]).reshape(-1)
    g = og[0]
    # bring the taken axes to the front: (idx.size, rest of a without ax), then scatter-add
    g = g.reshape(a.shape[:ax] + (i.size,) + a.shape[ax + 1:])
    g = xp.moveaxis(g, ax, 0)
    ga = xp.zeros((a.shape[ax],) + g.shape[1:], dtype=a.dtype)
    if i.size:  # the rows summed by index in one sparse product (add.at is ~15x slower), then scattered
        rows, sums = row_sums(xp, i, g, a.shape[ax])
        put_rows(xp, ga, rows, sums)
    return [xp.moveaxis(ga, 0, ax), None]


class _TakeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        a, idx = in_shapes
        if a is None or idx is None:
            return list(in_shapes), [None], []
        ax = norm_axes(self, self.params.axis, len(a))[0]
        return [a, idx], [a[:ax] + tuple(idx) + a[ax + 1:]], []

    def infer_type(self, in_types):
        return [in_types[0], in_types[1] or in_types[0]], [in_types[0]], []


defop("take", linear_input=True, param=TakeParam, base=_TakeProperty, arguments=("a", "indices"), deps="og,in",
      fwd=_take_fwd, bwd=_take_bwd, doc="Take slices of ``a`` along ``axis`` at ``indices`` (clipped or wrapped).")


class EmbeddingParam(OpParam):
    input_dim: int = Field(gt=0)
    output_dim: int = Field(gt=0)
    dtype: DType = "float32"
    sparse_grad: bool = False


class _EmbeddingProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, w = in_shapes
        p = self.params
        want = (p.input_dim, p.output_dim)
        if w is not None and tuple(w) != want:
            raise self.error(f"weight has shape {w} but input_dim={p.input_dim}, output_dim={p.output_dim} "
                             f"needs {want}")
        if d is None:
            return [None, want], [None], []
        return [d, want], [tuple(d) + (p.output_dim,)], []

    def infer_type(self, in_types):
        t = in_types[1] or self.params.dtype
        return [in_types[0] or t, t], [t], []


def embedding_forward(xp, p, d, w, out=None):
    """The rows of ``w`` at the (truncated, clipped) indices ``d``, written into ``out`` when given
    (``take``: faster than ``w[idx]``, and no copy of the result into the output)."""
    idx = xp.clip(d.astype("int64"), 0, p.input_dim - 1)
    if out is not None and out.dtype == w.dtype and out.flags.c_contiguous:
        return take_rows(xp, w, idx, out=out)
    return take_rows(xp, w, idx)


def _emb_bwd(xp, p, og, ins, outs, need, into):
    d, w = ins
    if not need[1]:
        return [None, None]
    idx = xp.clip(d.astype("int64"), 0, p.input_dim - 1).reshape(-1)
    # the distinct rows' sums in one sparse product (``add.at`` is ~10x slower), then scattered into a
    # zeroed gradient: no full-size temporary to copy
    rows, block = row_sums(xp, idx, og[0].reshape(-1, p.output_dim), p.input_dim)
    gw = into[1] if into[1] is not None and into[1].flags.c_contiguous else xp.empty(w.shape, w.dtype)
    gw[...] = 0
    put_rows(xp, gw, rows, block.astype(w.dtype, copy=False))
    return [None, gw]


defop("Embedding", param=EmbeddingParam, base=_EmbeddingProperty, arguments=("data", "weight"), deps="og,in",
      fwd=embedding_forward, bwd=_emb_bwd, fwd_out=True, bwd_into=True,
      doc="Map integer indices to rows of ``weight`` (input_dim x output_dim).")


class OneHotParam(OpParam):
    depth: int = Field(gt=0)
    on_value: float = 1.0
    off_value: float = 0.0
    dtype: DType = "float32"


class _OneHotProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        return [s], [None if s is None else tuple(s) + (self.params.depth,)], []

    def infer_type(self, in_types):
        return [in_types[0] or "float32"], [self.params.dtype], []


def _one_hot(xp, p, idx):
    i = idx.astype("int64")
    out = xp.full(idx.shape + (p.depth,), p.off_value, dtype=p.dtype)
    hit = (i[..., None] == xp.arange(p.depth))
    out[hit] = p.on_value
    return out


defop("one_hot", param=OneHotParam, base=_OneHotProperty, arguments=("indices",), deps="og",
      fwd=_one_hot, bwd=lambda xp, p, og, ins, outs: [None],
      doc="One-hot encode integer ``indices`` into a new last axis of size ``depth``.")


class _WhereProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        c, x, y = in_shapes
        s = x if x is not None else y
        unknown = -1 if is_np_shape() else 0  # a dimension not known yet (0 is a zero-size axis in NumPy mode)
        if s is None or c is None or unknown in c or unknown in s:  # MXNet: condition and data must be fully known
            return list(in_shapes), [None], []
        if x is not None and y is not None and x != y:
            raise self.error(f"x has shape {x} but y has {y}")
        if c is not None and tuple(c) != tuple(s) and tuple(c) != (s[0],):
            raise self.error(f"condition has shape {c}; it must be {s} or ({s[0]},)")
        return [c, s, s], [s], []

    def infer_type(self, in_types):
        t = in_types[1] or in_types[2]
        return [in_types[0] or t, t, t], [t], []


def _cond(xp, c, x):
    c = c != 0
    return c.reshape(c.shape + (1,) * (x.ndim - c.ndim))


def _where_bwd(xp, p, og, ins, outs):
    c, x, _ = ins
    m = _cond(xp, c, x)
    return [None, og[0] * m, og[0] * ~m]


defop("where", base=_WhereProperty, arguments=("condition", "x", "y"), deps="og,in",
      fwd=lambda xp, p, c, x, y: xp.where(_cond(xp, c, x), x, y), bwd=_where_bwd,
      doc="Elements of ``x`` where ``condition`` is non-zero, else of ``y``.")
