"""Shape ops: Reshape (MXNet's codes 0, -1, -2, -3, -4, reverse), Flatten, transpose, expand_dims,
squeeze, broadcast_to, broadcast_axis, tile, repeat.

>>> from mxasync.operator.tensor.shape import reshape_shape
>>> reshape_shape((2, 3, 4), (0, -1))
(2, 12)
>>> reshape_shape((2, 3, 4), (-3, -2)), reshape_shape((2, 12), (0, -4, 3, -1))
((6, 4), (2, 3, 4))
>>> reshape_shape((10, 5, 4), (-1, 0), reverse=True)
(50, 4)
"""

from __future__ import annotations

from typing import Optional

from ...base import MXAsyncError
from .._util import norm_axes, prod, unbroadcast
from ..functional import FunctionalProperty, defop
from ..params import OpParam, OptShape, Shape

__all__ = ["reshape_shape"]


def _tokens(spec, label="Reshape", given=None):
    out, i = [], 0
    while i < len(spec):
        if spec[i] == -4:
            if i + 2 >= len(spec):
                raise MXAsyncError(f"{label}: shape={given or spec}: -4 must be followed by two dimensions"
                                   + (" (read from the right with reverse=True)" if given else ""))
            out.append((-4, spec[i + 1], spec[i + 2]))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return out


def reshape_shape(src: tuple, spec: tuple, reverse: bool = False, label: str = "Reshape") -> tuple:
    """The output shape of MXNet's Reshape for input ``src`` and ``shape=spec``."""
    src = tuple(src)
    if reverse:  # MXNet reverses the codes themselves, then reads them left to right (-4 included)
        src = src[::-1]
        toks = _tokens(tuple(spec)[::-1], label, tuple(spec))
    else:
        toks = _tokens(tuple(spec), label)
    out, i, infer = [], 0, None
    try:
        for t in toks:
            if isinstance(t, tuple):
                d, a, b = src[i], t[1], t[2]
                a = d // b if a == -1 else a
                b = d // a if b == -1 else b
                if a * b != d:
                    raise MXAsyncError(f"{label}: shape={spec}: cannot split dimension {d} into {t[1]} x {t[2]}")
                out += [a, b]
                i += 1
            elif t == 0:
                out.append(src[i])
                i += 1
            elif t == -1:
                if infer is not None:
                    raise MXAsyncError(f"{label}: shape={spec}: more than one -1")
                infer = len(out)
                out.append(1)
                i += 1
            elif t == -2:
                out += src[i:]
                i = len(src)
            elif t == -3:
                out.append(src[i] * src[i + 1])
                i += 2
            elif t > 0:
                out.append(t)
                i += 1
            else:
                raise MXAsyncError(f"{label}: shape={spec}: invalid code {t}")
    except IndexError:
        raise MXAsyncError(f"{label}: shape={spec} does not fit an input of shape {tuple(src[::-1] if reverse else src)}") from None
    total = prod(src)
    if infer is not None:
        known = prod(out)
        if known == 0 or total % known:
            raise MXAsyncError(f"{label}: cannot reshape {src} to {spec}")
        out[infer] = total // known
    if reverse:
        out = out[::-1]
    if prod(out) != total:
        raise MXAsyncError(f"{label}: shape={spec} gives {tuple(out)} ({prod(out)} elements) but the input "
                           f"{tuple(src[::-1] if reverse else src)} has {total}")
    return tuple(out)


class _ShapeProperty(FunctionalProperty):
    out_shape = None  # fn(prop, in_shape) -> out_shape

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        return [s], [type(self).out_shape(self, s)], []


def _reshape_back(xp, p, og, ins, outs):
    return [og[0].reshape(ins[0].shape)]


class ReshapeParam(OpParam):
    shape: Shape = ()
    reverse: bool = False
    target_shape: Shape = ()  # MXNet's deprecated form: 0 (one) is inferred, no other code
    keep_highest: bool = False  # with target_shape: keep the input's first dimension


def _reshape_out(p, s, label="Reshape"):
    if p.shape or not p.target_shape:
        return reshape_shape(s, p.shape, p.reverse, label)
    out = list(p.target_shape)
    first = 1 if p.keep_highest else 0
    if p.keep_highest:
        out[0] = s[0]
    zeros = [i for i in range(first, len(out)) if out[i] == 0]
    if len(zeros) == 1:
        known = prod(d for i, d in enumerate(out) if i != zeros[0])
        out[zeros[0]] = prod(s) // known if known else 0
    if prod(out) != prod(s):
        raise MXAsyncError(f"{label}: target_shape={p.target_shape} gives {tuple(out)} but the input {tuple(s)} "
                           f"has {prod(s)} elements")
    return tuple(out)


def _reshape_refine(prop, in_shapes, out_shapes):
    """An input with one unknown (0) dimension gets it from the output's size (MXNet's legacy shape rule)."""
    s, out = in_shapes[0], out_shapes[0]
    if s is None or list(s).count(0) != 1:
        return None
    known, total = 1, 1
    for d in s:
        known *= d or 1
    for d in out:
        total *= d
    if total % known:
        return None
    return [tuple(total // known if d == 0 else d for d in s)]


defop("Reshape", linear_input=True, param=ReshapeParam, base=_ShapeProperty, aliases=("reshape",), deps="og,in", inplace=True,
      refine_partial_inputs=_reshape_refine,
      out_shape=staticmethod(lambda prop, s: _reshape_out(prop.params, s, prop.label)),
      fwd=lambda xp, p, x: x.reshape(_reshape_out(p, x.shape)), bwd=_reshape_back,
      doc="Reshape with MXNet's special codes: 0 copies a dimension, -1 infers one, -2 copies the rest, "
          "-3 merges two, -4 splits one into the next two values; ``reverse`` matches from the right.")

defop("Flatten", linear_input=True, base=_ShapeProperty, aliases=("flatten",), deps="og,in", inplace=True,
      out_shape=staticmethod(lambda prop, s: (s[0], prod(s[1:])) if s else (1, 1)),
      fwd=lambda xp, p, x: x.reshape(x.shape[0], -1), bwd=_reshape_back,
      doc="Collapse every axis but the first: (N, C, H, W) -> (N, C*H*W).")


class TransposeParam(OpParam):
    axes: Shape = ()


def _perm(p, ndim):
    return tuple(reversed(range(ndim))) if not p.axes else tuple(a % ndim for a in p.axes)


def _transpose_shape(prop, s):
    axes = prop.params.axes
    if axes and sorted(a % len(s) for a in axes) != list(range(len(s))):
        raise prop.error(f"axes={axes} is not a permutation of the {len(s)} axes of {s}")
    return tuple(s[a] for a in _perm(prop.params, len(s)))


def _transpose_refine(prop, in_shapes, out_shapes):
    """The input's shape from the output's (MXNet's backward shape rule): the inverse permutation."""
    out = out_shapes[0]
    if not out:
        return None
    perm = _perm(prop.params, len(out))
    if sorted(perm) != list(range(len(out))):
        return None  # the forward rule reports it
    inp = [0] * len(out)
    for i, a in enumerate(perm):
        inp[a] = out[i]
    return [tuple(inp)]


def _transpose_bwd(xp, p, og, ins, outs):
    perm = _perm(p, og[0].ndim)
    inv = [0] * len(perm)
    for i, a in enumerate(perm):
        inv[a] = i
    return [xp.transpose(og[0], inv)]


defop("transpose", linear_input=True, param=TransposeParam, base=_ShapeProperty, deps="og", out_shape=staticmethod(_transpose_shape),
      refine_partial_inputs=_transpose_refine,
      fwd=lambda xp, p, x: xp.transpose(x, _perm(p, x.ndim)), bwd=_transpose_bwd,
      doc="Permute the axes (reverse them when ``axes`` is empty).")


class AxisParam(OpParam):
    axis: int


def _expand_shape(prop, s):
    a = prop.params.axis
    if not -len(s) - 1 <= a <= len(s):
        raise prop.error(f"axis={a} is out of range for an input of {len(s)} dimensions")
    a = a % (len(s) + 1)
    return s[:a] + (1,) + s[a:]


defop("expand_dims", linear_input=True, param=AxisParam, base=_ShapeProperty, deps="og,in", inplace=True,
      out_shape=staticmethod(_expand_shape), fwd=lambda xp, p, x: xp.expand_dims(x, p.axis), bwd=_reshape_back,
      doc="Insert an axis of size 1 at ``axis``.")


class SqueezeParam(OpParam):
    axis: OptShape = None


def _squeeze_shape(prop, s):
    if prop.params.axis is None:
        out = tuple(d for d in s if d != 1)
    else:
        axes = norm_axes(prop, prop.params.axis, len(s))
        for a in axes:
            if s[a] != 1:
                raise prop.error(f"axis={prop.params.axis}: cannot squeeze dimension {a} of size {s[a]} in {s}")
        out = tuple(d for i, d in enumerate(s) if i not in axes)
    return out or (1,)


defop("squeeze", linear_input=True, param=SqueezeParam, base=_ShapeProperty, deps="og,in", inplace=True,
      out_shape=staticmethod(_squeeze_shape), bwd=_reshape_back,
      fwd=lambda xp, p, x: _squeeze(xp, p, x),
      doc="Remove axes of size 1 (all of them, or those in ``axis``).")


def _squeeze(xp, p, x):
    y = xp.squeeze(x, axis=None if p.axis is None else tuple(p.axis))
    return y.reshape(1) if y.ndim == 0 else y


class BroadcastToParam(OpParam):
    shape: Shape = ()


def _bto_shape(prop, s):
    want = prop.params.shape
    if len(want) != len(s):
        raise prop.error(f"shape={want} must have as many dimensions as the input {s}")
    out = tuple(d if w == 0 else w for d, w in zip(s, want, strict=False))
    for d, o in zip(s, out, strict=False):
        if d != o and d != 1:
            raise prop.error(f"cannot broadcast input {s} to shape={want}")
    return out


def _unb(xp, p, og, ins, outs):
    return [unbroadcast(xp, og[0], ins[0].shape)]


defop("broadcast_to", linear_input=True, param=BroadcastToParam, base=_ShapeProperty, deps="og,in",
      out_shape=staticmethod(_bto_shape), bwd=_unb,
      fwd=lambda xp, p, x: xp.broadcast_to(x, tuple(d if w == 0 else w for d, w in zip(x.shape, p.shape, strict=False))).copy(),
      doc="Broadcast to ``shape`` (0 keeps the input's dimension).")


class BroadcastAxisParam(OpParam):
    axis: Shape = ()
    size: Shape = ()


def _baxis_shape(prop, s):
    p = prop.params
    if len(p.axis) != len(p.size):
        raise prop.error(f"axis={p.axis} and size={p.size} must have the same length")
    out = list(s)
    for a, n in zip(p.axis, p.size, strict=False):
        a = norm_axes(prop, a, len(s))[0]
        if s[a] != 1:
            raise prop.error(f"axis={a} has size {s[a]}, only axes of size 1 can be broadcast")
        out[a] = n
    return tuple(out)


def _baxis(xp, p, x):
    shape = list(x.shape)
    for a, n in zip(p.axis, p.size, strict=False):
        shape[a % x.ndim] = n
    return xp.broadcast_to(x, tuple(shape)).copy()


defop("broadcast_axis", linear_input=True, param=BroadcastAxisParam, base=_ShapeProperty, deps="og,in", aliases=("broadcast_axes",),
      out_shape=staticmethod(_baxis_shape), bwd=_unb,
      fwd=_baxis,
      doc="Broadcast axes of size 1 to ``size``.")


class TileParam(OpParam):
    reps: Shape


def _tile_shape(prop, s):
    reps = prop.params.reps
    n = max(len(s), len(reps))
    s2, r2 = (1,) * (n - len(s)) + tuple(s), (1,) * (n - len(reps)) + tuple(reps)
    return tuple(a * b for a, b in zip(s2, r2, strict=False))


def _tile_bwd(xp, p, og, ins, outs):
    x = ins[0]
    n = og[0].ndim
    s2 = (1,) * (n - x.ndim) + x.shape
    r2 = (1,) * (n - len(p.reps)) + tuple(p.reps)
    g = og[0].reshape(tuple(v for pair in zip(r2, s2, strict=False) for v in pair))
    return [g.sum(axis=tuple(range(0, 2 * n, 2))).reshape(x.shape)]


defop("tile", linear_input=True, param=TileParam, base=_ShapeProperty, deps="og,in", out_shape=staticmethod(_tile_shape),
      fwd=lambda xp, p, x: xp.tile(x, p.reps), bwd=_tile_bwd, doc="Repeat the whole array ``reps`` times per axis.")


class RepeatParam(OpParam):
    repeats: int
    axis: Optional[int] = None


def _repeat_shape(prop, s):
    p = prop.params
    if p.axis is None:
        return (prod(s) * p.repeats,)
    a = norm_axes(prop, p.axis, len(s))[0]
    return s[:a] + (s[a] * p.repeats,) + s[a + 1:]


def _repeat_bwd(xp, p, og, ins, outs):
    x = ins[0]
    if p.axis is None:
        return [og[0].reshape(-1, p.repeats).sum(axis=1).reshape(x.shape)]
    a = p.axis % x.ndim
    g = og[0].reshape(x.shape[:a] + (x.shape[a], p.repeats) + x.shape[a + 1:])
    return [g.sum(axis=a + 1)]


defop("repeat", linear_input=True, param=RepeatParam, base=_ShapeProperty, deps="og,in", out_shape=staticmethod(_repeat_shape),
      fwd=lambda xp, p, x: xp.repeat(x, p.repeats, axis=p.axis), bwd=_repeat_bwd,
      doc="Repeat each element ``repeats`` times along ``axis`` (the flattened array when None).")

