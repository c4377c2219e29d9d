"""The interleaved attention matmuls of MXNet 1.9's transformer.cc (``mx.nd.contrib.interleaved_matmul_*``).

Projections are interleaved per head on the last axis: ``queries_keys_values`` (seq, batch,
3 * heads * d) holds for each head its query, key and value (d each), ``keys_values`` (seq, batch,
2 * heads * d) its key and value. With ``bh = batch * heads``:

* ``selfatt_qk(qkv)``: ``q / sqrt(d) @ k^T``, shape (bh, seq, seq);
* ``selfatt_valatt(qkv, attention)``: ``attention @ v`` back in (seq, batch, heads * d);
* ``encdec_qk(queries, keys_values)``: ``q / sqrt(d) @ k^T``, shape (bh, qseq, kseq), queries being
  (qseq, batch, heads * d);
* ``encdec_valatt(keys_values, attention)``: ``attention @ v``, shape (qseq, batch, heads * d).

Gradients go to every input.

>>> import mxasync as mx
>>> mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((4, 2, 12)), heads=2).shape
(4, 4, 4)
"""

from __future__ import annotations

import math

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["InterleavedMatmulParam"]


class InterleavedMatmulParam(OpParam):
    heads: int = Field(ge=1, description="the number of attention heads")


def _parts(x, heads, n):
    """(seq, batch, n * heads * d) -> (seq, batch, heads, n, d)."""
    s, b, e = x.shape
    return x.reshape(s, b, heads, n, e // (n * heads))


def _bh(t):
    """(seq, batch, heads, d) -> (batch * heads, seq, d)."""
    s, b, h, d = t.shape
    return t.transpose(1, 2, 0, 3).reshape(b * h, s, d)


def _unbh(t, batch, heads):
    """(batch * heads, seq, d) -> (seq, batch, heads * d)."""
    _, s, d = t.shape
    return t.reshape(batch, heads, s, d).transpose(2, 0, 1, 3).reshape(s, batch, heads * d)


def _tr(t):
    return t.transpose(0, 2, 1)


class _AttentionProperty(FunctionalProperty):
    """Shape rules from the op's kind: which inputs are interleaved and how many parts they hold."""

    kind = ""

    def _embed(self, name, shape, parts):
        h = self.params.heads
        if len(shape) != 3 or shape[2] % (parts * h):
            raise self.error(f"{name} has shape {tuple(shape)}; it must be (seq, batch, {parts} * heads * d) "
                             f"with heads={h}")
        return shape[2] // (parts * h)

    def infer_shape(self, in_shapes):
        if any(s is None for s in in_shapes):
            return list(in_shapes), [None], []
        h, names = self.params.heads, self.list_arguments()
        shapes = [tuple(s) for s in in_shapes]
        if self.kind == "selfatt_qk":
            s, b, _ = shapes[0]
            self._embed(names[0], shapes[0], 3)
            out = (b * h, s, s)
        elif self.kind == "selfatt_valatt":
            s, b, _ = shapes[0]
            d = self._embed(names[0], shapes[0], 3)
            want, out = (b * h, s, s), (s, b, h * d)
        elif self.kind == "encdec_qk":
            qs, b, _ = shapes[0]
            d = self._embed(names[0], shapes[0], 1)
            ks = shapes[1][0]
            if self._embed(names[1], shapes[1], 2) != d or shapes[1][1] != b:
                raise self.error(f"keys_values {shapes[1]} must be (kseq, {b}, {2 * h * d}) for queries {shapes[0]}")
            out = (b * h, qs, ks)
        else:  # encdec_valatt
            ks, b, _ = shapes[0]
            d = self._embed(names[0], shapes[0], 2)
            qs = shapes[1][1] if len(shapes[1]) == 3 else None
            want, out = (b * h, qs, ks), (qs, b, h * d)
        if self.kind.endswith("valatt") and shapes[1] != want:
            raise self.error(f"attention has shape {shapes[1]} but {names[0]} {shapes[0]} with heads={h} needs "
                             f"{want if None not in want else '(batch * heads, qseq, kseq)'}")
        return shapes, [out], []


def _selfatt_qk(xp, p, qkv):
    r = _parts(qkv, p.heads, 3)
    scale = 1.0 / math.sqrt(r.shape[-1])
    return (_bh(r[:, :, :, 0]) * qkv.dtype.type(scale)) @ _tr(_bh(r[:, :, :, 1]))


def _selfatt_qk_bwd(xp, p, og, ins, outs):
    qkv = ins[0]
    r = _parts(qkv, p.heads, 3)
    s, b = qkv.shape[:2]
    scale = qkv.dtype.type(1.0 / math.sqrt(r.shape[-1]))
    q, k, g = _bh(r[:, :, :, 0]), _bh(r[:, :, :, 1]), og[0]
    grad = xp.zeros_like(qkv)
    gr = _parts(grad, p.heads, 3)
    gr[:, :, :, 0] = _unbh((g @ k) * scale, b, p.heads).reshape(gr[:, :, :, 0].shape)
    gr[:, :, :, 1] = _unbh((_tr(g) @ q) * scale, b, p.heads).reshape(gr[:, :, :, 1].shape)
    return [grad]


def _selfatt_valatt(xp, p, qkv, att):
    r = _parts(qkv, p.heads, 3)
    return _unbh(att @ _bh(r[:, :, :, 2]), qkv.shape[1], p.heads)


def _selfatt_valatt_bwd(xp, p, og, ins, outs):
    qkv, att = ins
    r = _parts(qkv, p.heads, 3)
    s, b = qkv.shape[:2]
    v = _bh(r[:, :, :, 2])
    g = _bh(og[0].reshape(og[0].shape[0], b, p.heads, -1))
    grad = xp.zeros_like(qkv)
    gr = _parts(grad, p.heads, 3)
    gr[:, :, :, 2] = _unbh(_tr(att) @ g, b, p.heads).reshape(gr[:, :, :, 2].shape)
    return [grad, g @ _tr(v)]


def _encdec_qk(xp, p, queries, kv):
    q = _bh(_parts(queries, p.heads, 1)[:, :, :, 0])
    k = _bh(_parts(kv, p.heads, 2)[:, :, :, 0])
    return (q * queries.dtype.type(1.0 / math.sqrt(q.shape[-1]))) @ _tr(k)


def _encdec_qk_bwd(xp, p, og, ins, outs):
    queries, kv = ins
    b = queries.shape[1]
    q = _bh(_parts(queries, p.heads, 1)[:, :, :, 0])
    k = _bh(_parts(kv, p.heads, 2)[:, :, :, 0])
    scale = queries.dtype.type(1.0 / math.sqrt(q.shape[-1]))
    g = og[0]
    gkv = xp.zeros_like(kv)
    gr = _parts(gkv, p.heads, 2)
    gr[:, :, :, 0] = _unbh((_tr(g) @ q) * scale, b, p.heads).reshape(gr[:, :, :, 0].shape)
    return [_unbh((g @ k) * scale, b, p.heads), gkv]


def _encdec_valatt(xp, p, kv, att):
    return _unbh(att @ _bh(_parts(kv, p.heads, 2)[:, :, :, 1]), kv.shape[1], p.heads)


def _encdec_valatt_bwd(xp, p, og, ins, outs):
    kv, att = ins
    b = kv.shape[1]
    v = _bh(_parts(kv, p.heads, 2)[:, :, :, 1])
    g = _bh(og[0].reshape(og[0].shape[0], b, p.heads, -1))
    gkv = xp.zeros_like(kv)
    gr = _parts(gkv, p.heads, 2)
    gr[:, :, :, 1] = _unbh(_tr(att) @ g, b, p.heads).reshape(gr[:, :, :, 1].shape)
    return [gkv, g @ _tr(v)]


_OPS = {
    "selfatt_qk": (("queries_keys_values",), _selfatt_qk, _selfatt_qk_bwd,
                   "q / sqrt(d) @ k^T of the interleaved self-attention projections: (batch*heads, seq, seq)."),
    "selfatt_valatt": (("queries_keys_values", "attention"), _selfatt_valatt, _selfatt_valatt_bwd,
                       "attention @ v of the interleaved self-attention projections: (seq, batch, heads*d)."),
    "encdec_qk": (("queries", "keys_values"), _encdec_qk, _encdec_qk_bwd,
                  "q / sqrt(d) @ k^T between queries and interleaved keys/values: (batch*heads, qseq, kseq)."),
    "encdec_valatt": (("keys_values", "attention"), _encdec_valatt, _encdec_valatt_bwd,
                      "attention @ v of interleaved keys/values: (qseq, batch, heads*d)."),
}

for _kind, (_args, _fwd, _bwd, _doc) in _OPS.items():
    defop(f"_contrib_interleaved_matmul_{_kind}", param=InterleavedMatmulParam, base=_AttentionProperty,
          arguments=_args, fwd=_fwd, bwd=_bwd, deps="og,in", kind=_kind, doc=_doc)
