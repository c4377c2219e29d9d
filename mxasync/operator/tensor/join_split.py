"""Joining and slicing: Concat, SliceChannel (split), stack, slice, slice_axis.

>>> from mxasync.operator import get_op
>>> get_op("Concat").prepare(num_args=2, dim=1).infer_shape([(2, 3), (2, 5)])[1]
[(2, 8)]
>>> get_op("slice").prepare(begin="(None, 1)", end="(None, -1)").infer_shape([(4, 5)])[1]
[(4, 3)]
"""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import BeforeValidator

from .._util import norm_axes
from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam, _to_shape

__all__: list[str] = []


class ConcatParam(OpParam):
    num_args: int = Field(ge=1)
    dim: int = 1


def _concat_shape(prop, in_shapes):
    p = prop.params
    known = [s for s in in_shapes if s is not None]
    if len(known) < len(in_shapes):
        return list(in_shapes), [None], []
    nd = len(known[0])
    d = norm_axes(prop, p.dim, nd)[0]
    for i, s in enumerate(in_shapes):
        if len(s) != nd or any(a != b for k, (a, b) in enumerate(zip(s, known[0], strict=False)) if k != d):
            raise prop.error(f"arg{i} has shape {s} but arg0 has {known[0]}; they may differ only in dim={p.dim}")
    out = list(known[0])
    # a 0 (unknown) size along dim leaves the total unknown (MXNet's partial shapes)
    out[d] = 0 if any(s[d] == 0 for s in in_shapes) else sum(s[d] for s in in_shapes)
    return list(in_shapes), [tuple(out)], []


def _concat_refine(prop, in_shapes, out_shapes, max_unknown=1):
    """Unknown input dimensions from the output (MXNet's backward shape rule): every dimension but ``dim``,
    and ``dim`` itself for the one input whose size there is unknown (it lets gluon's fused RNN layers infer
    their first weight from the concatenated parameter vector)."""
    out = out_shapes[0]
    if out is None or any(s is not None and len(s) != len(out) for s in in_shapes):
        return None
    d = norm_axes(prop, prop.params.dim, len(out))[0]
    ins = [None if s is None else tuple(o if k != d and not x else x for k, (x, o) in enumerate(zip(s, out, strict=True)))
           for s in in_shapes]
    unknown = [i for i, s in enumerate(ins) if s is None or not s[d]]
    if 0 < len(unknown) <= max_unknown and out[d]:
        rest = out[d] - sum(s[d] for j, s in enumerate(ins) if j not in unknown)
        if rest > 0 and rest % len(unknown) == 0:
            for i in unknown:  # several unknown inputs share the rest evenly (MXNet's _rnn_param_concat)
                shape = list(out if ins[i] is None else ins[i])
                shape[d] = rest // len(unknown)
                ins[i] = tuple(shape)
    return ins


def _rnn_param_concat_refine(prop, in_shapes, out_shapes):
    return _concat_refine(prop, in_shapes, out_shapes, max_unknown=2)


def _concat_bwd(xp, p, og, ins, outs):
    d = p.dim % og[0].ndim
    cuts, acc = [], 0
    for x in ins[:-1]:
        acc += x.shape[d]
        cuts.append(acc)
    return xp.split(og[0], cuts, axis=d)


defop("Concat", param=ConcatParam, var_args="num_args", aliases=("concat",), deps="og,in",
      args=lambda p: [f"arg{i}" for i in range(p.num_args)], shape=_concat_shape,
      fwd=lambda xp, p, *xs: xp.concatenate(xs, axis=p.dim), bwd=_concat_bwd, refine_partial_inputs=_concat_refine,
      doc="Join ``num_args`` arrays along ``dim``.")
defop("_rnn_param_concat", param=ConcatParam, var_args="num_args", deps="og,in",
      args=lambda p: [f"arg{i}" for i in range(p.num_args)], shape=_concat_shape,
      fwd=lambda xp, p, *xs: xp.concatenate(xs, axis=p.dim), bwd=_concat_bwd,
      refine_partial_inputs=_rnn_param_concat_refine,
      doc="Concat for the flat parameters of gluon's fused RNN layers: from the output size it infers up to two "
          "inputs of unknown size, which share the rest evenly (both directions' first-layer weights).")


class StackParam(OpParam):
    axis: int = 0
    num_args: int = Field(ge=1)


def _stack_shape(prop, in_shapes):
    if any(s is None for s in in_shapes):
        return list(in_shapes), [None], []
    s0 = in_shapes[0]
    for i, s in enumerate(in_shapes):
        if s != s0:
            raise prop.error(f"arg{i} has shape {s} but arg0 has {s0}")
    a = prop.params.axis % (len(s0) + 1)
    return list(in_shapes), [s0[:a] + (len(in_shapes),) + s0[a:]], []


defop("stack", param=StackParam, var_args="num_args", deps="og", shape=_stack_shape,
      args=lambda p: [f"arg{i}" for i in range(p.num_args)],
      fwd=lambda xp, p, *xs: xp.stack(xs, axis=p.axis),
      bwd=lambda xp, p, og, ins, outs: [og[0].take(i, axis=p.axis % og[0].ndim) for i in range(p.num_args)],
      doc="Join ``num_args`` same-shape arrays along a new ``axis``.")


class SliceChannelParam(OpParam):
    num_outputs: int = Field(ge=1)
    axis: int = 1
    squeeze_axis: bool = False


class _SliceChannelProperty(FunctionalProperty):
    def list_outputs(self):
        return [f"output{i}" for i in range(self.params.num_outputs)]

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        n = self.params.num_outputs
        if s is None:
            return [None], [None] * n, []
        a = norm_axes(self, self.params.axis, len(s))[0]
        if s[a] % n:
            raise self.error(f"num_outputs={n} does not divide axis {a} of the input {s}")
        if self.params.squeeze_axis and s[a] != n:
            raise self.error(f"squeeze_axis=True needs axis {a} of size num_outputs={n}, input is {s}")
        part = s[:a] + ((s[a] // n,) if not self.params.squeeze_axis else ()) + s[a + 1:]
        return [s], [part] * n, []

    def refine_partial_inputs(self, in_shapes, out_shapes):
        """Unknown (0) input dimensions from the parts (MXNet's backward shape rule)."""
        s = in_shapes[0]
        known = [x for x in out_shapes if x is not None]
        if s is None or not known or any(len(x) != len(known[0]) for x in known):
            return None
        o = tuple(max(dims) for dims in zip(*known, strict=True))  # every part has one shape: merge what they know
        a = norm_axes(self, self.params.axis, len(s))[0]
        n = self.params.num_outputs
        whole = (tuple(o[:a]) + (n,) + tuple(o[a:]) if self.params.squeeze_axis
                 else tuple(o[:a]) + (o[a] * n,) + tuple(o[a + 1:]))
        if len(whole) != len(s):
            return None
        return [tuple(x or w for x, w in zip(s, whole, strict=True))]


def _split_fwd(xp, p, x):
    parts = xp.split(x, p.num_outputs, axis=p.axis)
    if p.squeeze_axis:
        parts = [q.squeeze(axis=p.axis) for q in parts]
    return parts


def _split_bwd(xp, p, og, ins, outs):
    x = ins[0]
    a = p.axis % x.ndim
    gs = [g if g is not None else xp.zeros_like(o) for g, o in zip(og, outs, strict=False)]
    if p.squeeze_axis:
        gs = [xp.expand_dims(g, a) for g in gs]
    return [xp.concatenate(gs, axis=a)]


defop("SliceChannel", param=SliceChannelParam, base=_SliceChannelProperty, aliases=("split",), deps="og,in,out",
      outputs=("output0",), fwd=_split_fwd, bwd=_split_bwd,
      doc="Split into ``num_outputs`` equal parts along ``axis`` (dropping it with ``squeeze_axis``).")


# MXNet parses begin/end/step as shapes: an int means a 1-tuple (``crop(x, begin=2, end=5)``)
_Bounds = Annotated[tuple[Optional[int], ...], BeforeValidator(_to_shape)]


class SliceParam(OpParam):
    begin: _Bounds
    end: _Bounds
    step: _Bounds = ()


def _slices(p, shape):
    if len(p.begin) != len(p.end) or (p.step and len(p.step) != len(p.begin)):
        raise ValueError(f"begin={p.begin}, end={p.end} and step={p.step} must have the same length")
    if len(p.begin) > len(shape):
        raise ValueError(f"begin={p.begin} has more axes than the input {shape}")
    steps = p.step or (None,) * len(p.begin)
    return tuple(slice(b, e, s) for b, e, s in zip(p.begin, p.end, steps, strict=False))


class _SliceProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        try:
            sl = _slices(self.params, s)
        except ValueError as exc:
            raise self.error(str(exc)) from None
        # an unknown (0) dimension stays unknown, the known ones are sliced (MXNet's partial shapes)
        out = tuple(len(range(*k.indices(d))) if d else 0 for k, d in zip(sl, s, strict=False)) + tuple(s[len(sl):])
        if any(o == 0 and d for o, d in zip(out, s, strict=False)):
            raise self.error(f"begin={self.params.begin}, end={self.params.end} select nothing from {s}")
        return [s], [out], []


def _slice_bwd(xp, p, og, ins, outs):
    g = xp.zeros_like(ins[0])
    g[_slices(p, g.shape)] = og[0]
    return [g]


defop("slice", linear_input=True, param=SliceParam, base=_SliceProperty, aliases=("crop",), deps="og,in",
      fwd=lambda xp, p, x: x[_slices(p, x.shape)].copy(), bwd=_slice_bwd,
      doc="Basic slicing: ``x[begin[0]:end[0]:step[0], ...]``; None keeps the whole axis.")


class SliceAxisParam(OpParam):
    axis: int
    begin: int
    end: Optional[int] = None  # MXNet requires it but takes None (to the end); a symbol drops a None value


def _axis_slice(p, ndim):
    a = p.axis % ndim
    return (slice(None),) * a + (slice(p.begin, p.end),)


class _SliceAxisProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        a = norm_axes(self, self.params.axis, len(s))[0]
        if not s[a]:  # unknown: stays unknown
            return [s], [s], []
        n = len(range(*slice(self.params.begin, self.params.end).indices(s[a])))
        if n <= 0:
            raise self.error(f"begin={self.params.begin}, end={self.params.end} select nothing from axis {a} of {s}")
        return [s], [s[:a] + (n,) + s[a + 1:]], []


def _slice_axis_bwd(xp, p, og, ins, outs):
    g = xp.zeros_like(ins[0])
    g[_axis_slice(p, g.ndim)] = og[0]
    return [g]


defop("slice_axis", linear_input=True, param=SliceAxisParam, base=_SliceAxisProperty, deps="og,in",
      fwd=lambda xp, p, x: x[_axis_slice(p, x.ndim)].copy(), bwd=_slice_axis_bwd,
      doc="Slice ``begin:end`` along one ``axis``.")
