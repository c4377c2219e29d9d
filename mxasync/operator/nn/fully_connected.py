"""Dense ops: FullyConnected, dot, batch_dot.

>>> from mxasync.operator import get_op
>>> get_op("FullyConnected").prepare(num_hidden=3).infer_shape([(2, 5), None, None])
([(2, 5), (3, 5), (3,)], [(2, 3)], [])
>>> get_op("FullyConnected").prepare(num_hidden=3, name="fc1").infer_shape([(2, 5), (3, 7), None])
Traceback (most recent call last):
  ...
mxasync.base.MXAsyncError: FullyConnected(fc1): weight has shape (3, 7) but data (2, 5) needs (3, 5)
"""

from __future__ import annotations

from .._util import prod
from ..functional import FunctionalProperty, defop
from ..kernels import fully_connected as fck
from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam

__all__: list[str] = []


class FullyConnectedParam(OpParam):
    num_hidden: int = Field(ge=1)
    no_bias: bool = False
    flatten: bool = True


class _FCProperty(FunctionalProperty):
    float16_in_float32 = True

    def infer_shape(self, in_shapes):
        p = self.params
        d, w = in_shapes[0], in_shapes[1]
        b = in_shapes[2] if len(in_shapes) > 2 else None
        if d is None:
            return list(in_shapes), [None], []
        if len(d) < 1 or (not p.flatten and len(d) < 1):
            raise self.error(f"data has shape {d}; it needs at least one dimension")
        k = prod(d[1:]) if p.flatten else d[-1]
        want = (p.num_hidden, k)
        if w is not None and tuple(w) != want:
            raise self.error(f"weight has shape {tuple(w)} but data {tuple(d)} needs {want}")
        if not p.no_bias and b is not None and tuple(b) != (p.num_hidden,):
            raise self.error(f"bias has shape {tuple(b)} but num_hidden={p.num_hidden} needs ({p.num_hidden},)")
        out = (d[0], p.num_hidden) if p.flatten else tuple(d[:-1]) + (p.num_hidden,)
        ins = [d, want] + ([] if p.no_bias else [(p.num_hidden,)])
        return ins, [out], []


    def refine_partial_inputs(self, in_shapes, out_shapes):
        """Unknown (0) leading dimensions of data come from the output (MXNet's FullyConnected shape rule)."""
        d, out = in_shapes[0], out_shapes[0]
        if d is None or out is None:
            return None
        lead = (out[0],) if self.params.flatten else tuple(out[:-1])
        rest = tuple(d[1:]) if self.params.flatten else (d[-1],)
        return [lead + rest]


def _fc_fwd(xp, p, data, weight, bias=None, out=None, run=PLAIN):
    return fck.fully_connected(xp, data, weight, bias, num_hidden=p.num_hidden, no_bias=p.no_bias, flatten=p.flatten,
                               out=out, run=run)


def _fc_bwd(xp, p, og, ins, outs, need, into, run=PLAIN):
    # gradients no one asked for (the data input of a first layer) are never computed
    need = list(need) + [False] * (3 - len(need))
    gd, gw, gb = fck.fully_connected_backward(xp, og[0], ins[0], ins[1], num_hidden=p.num_hidden,
                                              no_bias=p.no_bias, flatten=p.flatten, need_data_grad=need[0],
                                              need_weight_grad=need[1], need_bias_grad=need[2],
                                              into=tuple(into) + (None,) * (3 - len(into)), run=run)
    return [gd, gw] if p.no_bias else [gd, gw, gb]


def _nd_dot(nd, a, b, ta=False, tb=False):
    return nd.invoke("dot", [a, b], transpose_a=ta, transpose_b=tb)


def _fc_gradient(nd, prop, og, ins, outs):
    """The recorded gradient (create_graph): ``dx = g w``, ``dw = g^T x``, ``db = sum(g)``."""
    p, g = prop.params, og[0]
    x, w = ins[0], ins[1]
    if p.flatten:
        x2, g2 = x.reshape((x.shape[0], -1)), g
    else:
        x2, g2 = x.reshape((-1, x.shape[-1])), g.reshape((-1, p.num_hidden))
    gx = _nd_dot(nd, g2, w).reshape(x.shape)
    gw = _nd_dot(nd, g2, x2, True, False)
    if p.no_bias:
        return [gx, gw]
    return [gx, gw, nd.invoke("sum", [g2], axis=(0,))]


defop("FullyConnected", param=FullyConnectedParam, base=_FCProperty, arguments=("data", "weight", "bias"),
      args=lambda p: ["data", "weight"] if p.no_bias else ["data", "weight", "bias"], deps="og,in",
      fwd=_fc_fwd, bwd=_fc_bwd, fwd_out=True, bwd_into=True, recorded_gradient=_fc_gradient,
      doc="``out = dot(data, weight.T) + bias`` (data flattened to 2-D unless flatten=False).")
register_numpy("FullyConnected", _fc_fwd, _fc_bwd)


class DotParam(OpParam):
    transpose_a: bool = False
    transpose_b: bool = False
    forward_stype: str | None = None


def _t(x, flag, batch=False):
    if not flag:
        return x
    return x.swapaxes(-1, -2) if batch else x.T


class _DotProperty(FunctionalProperty):
    float16_in_float32 = True

    arguments = ("lhs", "rhs")
    batch = False

    def infer_shape(self, in_shapes):
        a, b = in_shapes
        if a is None or b is None:
            return list(in_shapes), [None], []
        p = self.params
        if self.batch:
            if len(a) != 3 or len(b) != 3 or a[0] != b[0]:
                raise self.error(f"lhs {a} and rhs {b} must be 3-D with the same batch size")
            m, k = (a[2], a[1]) if p.transpose_a else (a[1], a[2])
            k2, n = (b[2], b[1]) if p.transpose_b else (b[1], b[2])
            out = (a[0], m, n)
        else:
            if p.transpose_a:
                a2 = tuple(reversed(a))
            else:
                a2 = a
            b2 = tuple(reversed(b)) if p.transpose_b else b
            k, k2 = a2[-1], b2[0]
            out = tuple(a2[:-1]) + tuple(b2[1:])
        if k != k2:
            raise self.error(f"lhs {a} and rhs {b} (transpose_a={p.transpose_a}, transpose_b={p.transpose_b}) "
                             f"have inner dimensions {k} and {k2}")
        return [a, b], [out or (1,)], []


def _dot_fwd(xp, p, a, b, run=PLAIN):
    a2 = xp.transpose(a) if p.transpose_a else a
    b2 = xp.transpose(b) if p.transpose_b else b
    if a2.ndim == 2 and b2.ndim == 2:
        return run.matmul(xp, a2, b2)
    y = xp.tensordot(a2, b2, axes=1)
    return y.reshape(1) if y.ndim == 0 else y


def _dot_bwd(xp, p, og, ins, outs, run=PLAIN):
    a, b = ins
    a2 = xp.transpose(a) if p.transpose_a else a
    b2 = xp.transpose(b) if p.transpose_b else b
    g = og[0].reshape(a2.shape[:-1] + b2.shape[1:])
    na, nb = a2.ndim - 1, b2.ndim - 1
    if na == 1 and nb == 1:
        ga2, gb2 = run.matmul(xp, g, b2.T), run.matmul(xp, a2.T, g)
        return [xp.transpose(ga2) if p.transpose_a else ga2, xp.transpose(gb2) if p.transpose_b else gb2]
    ga2 = xp.tensordot(g, b2, axes=(tuple(range(na, na + nb)), tuple(range(1, nb + 1))))
    gb2 = xp.tensordot(a2, g, axes=(tuple(range(na)), tuple(range(na))))
    return [xp.transpose(ga2) if p.transpose_a else ga2, xp.transpose(gb2) if p.transpose_b else gb2]


def _dot_gradient(nd, prop, og, ins, outs):
    """``C = op(A) op(B)`` of 2-D arrays, recorded: ``dA = og op(B)^T`` and ``dB = op(A)^T og``
    (transposed back); other ranks are left to the kernel (None)."""
    a, b = ins
    p, g = prop.params, og[0]
    if a.ndim != 2 or b.ndim != 2:
        return None
    ta, tb = p.transpose_a, p.transpose_b
    ga = _nd_dot(nd, b, g, tb, True) if ta else _nd_dot(nd, g, b, False, not tb)
    gb = _nd_dot(nd, g, a, True, ta) if tb else _nd_dot(nd, a, g, not ta, False)
    return [ga, gb]


defop("dot", param=DotParam, base=_DotProperty, arguments=("lhs", "rhs"), deps="og,in", fwd=_dot_fwd, bwd=_dot_bwd,
      recorded_gradient=_dot_gradient,
      doc="Dot product: the last axis of lhs with the first axis of rhs (after optional transposes).")
register_numpy("dot", _dot_fwd, _dot_bwd)


def _bdot_fwd(xp, p, a, b, run=PLAIN):
    return run.matmul(xp, _t(a, p.transpose_a, True), _t(b, p.transpose_b, True))


def _bdot_bwd(xp, p, og, ins, outs, run=PLAIN):
    a, b = ins
    g = og[0]
    a2, b2 = _t(a, p.transpose_a, True), _t(b, p.transpose_b, True)
    ga2 = run.matmul(xp, g, b2.swapaxes(-1, -2))
    gb2 = run.matmul(xp, a2.swapaxes(-1, -2), g)
    return [_t(ga2, p.transpose_a, True), _t(gb2, p.transpose_b, True)]


defop("batch_dot", param=DotParam, base=_DotProperty, arguments=("lhs", "rhs"), deps="og,in", batch=True,
      fwd=_bdot_fwd, bwd=_bdot_bwd, doc="Batched matrix product of (B, M, K) and (B, K, N) arrays.")
register_numpy("batch_dot", _bdot_fwd, _bdot_bwd)
