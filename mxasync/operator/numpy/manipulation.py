"""NumPy-interface shape and layout ops: reshape, transpose, concatenate, stack, split, flip, ...

Each is NumPy's function run in the kernel; its gradient undoes the rearrangement.

>>> from mxasync.operator import get_op
>>> get_op("_npi_transpose").prepare(axes=(1, 0)).infer_shape([(2, 3)])[1]
[(3, 2)]
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from ._npop import Axis, npop, unbroadcast

__all__: list[str] = []

Shape = tuple[int, ...]


def _like(xp, g, x):
    return g.reshape(x.shape).astype(x.dtype, copy=False)


# -- reshape family ---------------------------------------------------------------------------------
npop("_npi_reshape", lambda xp, p, a: xp.reshape(a, p.newshape, order=p.order),
     params={"newshape": (Shape, ()), "order": (str, "C")},
     grad=lambda xp, p, og, ins, outs: [_like(xp, og[0], ins[0])], deps="og,in",
     doc="NumPy's ``reshape`` (-1 infers one axis).")
npop("_npi_ravel", lambda xp, p, a: xp.ravel(a),
     grad=lambda xp, p, og, ins, outs: [_like(xp, og[0], ins[0])], deps="og,in", doc="NumPy's ``ravel``.")
npop("_npi_squeeze", lambda xp, p, a: xp.squeeze(a, axis=p.axis), params={"axis": (Axis, None)},
     grad=lambda xp, p, og, ins, outs: [_like(xp, og[0], ins[0])], deps="og,in", doc="NumPy's ``squeeze``.")
npop("_npi_expand_dims", lambda xp, p, a: xp.expand_dims(a, p.axis), params={"axis": (Union[int, Shape], 0)},
     grad=lambda xp, p, og, ins, outs: [_like(xp, og[0], ins[0])], deps="og,in", doc="NumPy's ``expand_dims``.")
def _target(src: tuple, shape: tuple) -> tuple:
    """``shape`` with MXNet's -2 ("the source's size here", aligned from the right) resolved."""
    off = len(shape) - len(src)
    return tuple(src[i - off] if d == -2 and i >= off else (1 if d == -2 else d) for i, d in enumerate(shape))


npop("_npi_broadcast_to", lambda xp, p, a: xp.broadcast_to(a, _target(a.shape, p.shape)).copy(),
     params={"shape": (Shape, ())},
     grad=lambda xp, p, og, ins, outs: [unbroadcast(xp, og[0], ins[0].shape)], deps="og,in",
     doc="NumPy's ``broadcast_to`` (a copy).")
npop("_npi_atleast", lambda xp, p, a: getattr(xp, f"atleast_{p.ndim}d")(a).copy(), params={"ndim": (int, 1)},
     grad=lambda xp, p, og, ins, outs: [_like(xp, og[0], ins[0])], deps="og,in",
     doc="NumPy's ``atleast_1d``/``2d``/``3d`` of one array.")


def _transpose_grad(xp, p, og, ins, outs):
    nd = ins[0].ndim
    axes = tuple(a % nd for a in p.axes) if p.axes else tuple(reversed(range(nd)))
    return [xp.transpose(og[0], np.argsort(axes))]


npop("_npi_transpose", lambda xp, p, a: xp.transpose(a, p.axes or None).copy(), params={"axes": (Optional[Shape], None)},
     grad=_transpose_grad, deps="og,in", doc="NumPy's ``transpose``.")
npop("_npi_swapaxes", lambda xp, p, a: xp.swapaxes(a, p.axis1, p.axis2).copy(),
     params={"axis1": (int, 0), "axis2": (int, 0)},
     grad=lambda xp, p, og, ins, outs: [xp.swapaxes(og[0], p.axis1, p.axis2)], deps="og",
     doc="NumPy's ``swapaxes``.")
npop("_npi_moveaxis", lambda xp, p, a: xp.moveaxis(a, p.source, p.destination).copy(),
     params={"source": (Union[int, Shape], 0), "destination": (Union[int, Shape], 0)},
     grad=lambda xp, p, og, ins, outs: [xp.moveaxis(og[0], p.destination, p.source)], deps="og",
     doc="NumPy's ``moveaxis``.")
npop("_npi_flip", lambda xp, p, a: xp.flip(a, p.axis).copy(), params={"axis": (Axis, None)},
     grad=lambda xp, p, og, ins, outs: [xp.flip(og[0], p.axis)], deps="og", doc="NumPy's ``flip``.")
npop("_npi_roll", lambda xp, p, a: xp.roll(a, p.shift, p.axis), params={"shift": (Union[int, Shape], 0),
                                                                    "axis": (Axis, None)},
     grad=lambda xp, p, og, ins, outs: [xp.roll(og[0], tuple(-s for s in p.shift) if isinstance(p.shift, tuple)
                                                else -p.shift, p.axis)], deps="og", doc="NumPy's ``roll``.")
npop("_npi_rot90", lambda xp, p, a: xp.rot90(a, p.k, p.axes).copy(), params={"k": (int, 1), "axes": (Shape, (0, 1))},
     grad=lambda xp, p, og, ins, outs: [xp.rot90(og[0], -p.k, p.axes)], deps="og", doc="NumPy's ``rot90``.")


def _tile_grad(xp, p, og, ins, outs):
    a = ins[0]
    reps = (p.reps,) if isinstance(p.reps, int) else tuple(p.reps)
    nd = max(a.ndim, len(reps))
    shape = (1,) * (nd - a.ndim) + a.shape
    reps = (1,) * (nd - len(reps)) + reps
    g = og[0].reshape(tuple(x for r, s in zip(reps, shape, strict=True) for x in (r, s)))
    g = g.sum(axis=tuple(range(0, 2 * nd, 2)))
    return [g.reshape(a.shape)]


npop("_npi_tile", lambda xp, p, a: xp.tile(a, p.reps), params={"reps": (Union[int, Shape], 1)},
     grad=_tile_grad, deps="og,in", doc="NumPy's ``tile``.")


def _repeat_grad(xp, p, og, ins, outs):
    a = ins[0]
    if p.axis is None:
        flat = og[0].reshape(-1, p.repeats).sum(axis=1)
        return [flat.reshape(a.shape)]
    ax = p.axis % a.ndim
    shape = a.shape[:ax] + (a.shape[ax], p.repeats) + a.shape[ax + 1:]
    return [og[0].reshape(shape).sum(axis=ax + 1)]


npop("_npi_repeat", lambda xp, p, a: xp.repeat(a, p.repeats, p.axis),
     params={"repeats": (int, 1), "axis": (Optional[int], None)}, grad=_repeat_grad, deps="og,in",
     doc="NumPy's ``repeat`` (one repeat count).")


# -- joining and splitting --------------------------------------------------------------------------
def _split_back(xp, g, ins, axis, squeeze=False):
    outs, start = [], 0
    for x in ins:
        n = 1 if squeeze else x.shape[axis]
        sl = [slice(None)] * g.ndim
        sl[axis] = slice(start, start + n)
        piece = g[tuple(sl)]
        outs.append(piece.reshape(x.shape))
        start += n
    return outs


def _concat(xp, p, *arrays):
    if p.axis is None:
        return xp.concatenate([a.reshape(-1) for a in arrays])
    return xp.concatenate(arrays, axis=p.axis)


def _concat_grad(xp, p, og, ins, outs):
    if p.axis is None:
        flat = _split_back(xp, og[0], [x.reshape(-1) for x in ins], 0)
        return [f.reshape(x.shape) for f, x in zip(flat, ins, strict=True)]
    return _split_back(xp, og[0], ins, p.axis % og[0].ndim)


npop("_npi_concatenate", _concat, params={"axis": (Optional[int], 0)}, var_args=True, grad=_concat_grad,
     deps="og,in", doc="NumPy's ``concatenate``.")


def _stack_grad(xp, p, og, ins, outs):
    ax = p.axis % og[0].ndim
    return _split_back(xp, og[0], ins, ax, squeeze=True)


npop("_npi_stack", lambda xp, p, *a: xp.stack(a, axis=p.axis), params={"axis": (int, 0)}, var_args=True,
     grad=_stack_grad, deps="og,in", doc="NumPy's ``stack``.")


def _vstack(xp, p, *a):
    return xp.vstack(a)


def _vstack_grad(xp, p, og, ins, outs):
    pieces = _split_back(xp, og[0], [xp.atleast_2d(x) for x in ins], 0)
    return [g.reshape(x.shape) for g, x in zip(pieces, ins, strict=True)]


npop("_npi_vstack", _vstack, var_args=True, grad=_vstack_grad, deps="og,in", doc="NumPy's ``vstack``.")


def _hstack_grad(xp, p, og, ins, outs):
    ax = 0 if ins[0].ndim <= 1 else 1
    pieces = _split_back(xp, og[0], [xp.atleast_1d(x) for x in ins], ax)
    return [g.reshape(x.shape) for g, x in zip(pieces, ins, strict=True)]


npop("_npi_hstack", lambda xp, p, *a: xp.hstack(a), var_args=True, grad=_hstack_grad, deps="og,in",
     doc="NumPy's ``hstack``.")


def _dstack_grad(xp, p, og, ins, outs):
    pieces = _split_back(xp, og[0], [xp.atleast_3d(x) for x in ins], 2)
    return [g.reshape(x.shape) for g, x in zip(pieces, ins, strict=True)]


npop("_npi_dstack", lambda xp, p, *a: xp.dstack(a), var_args=True, grad=_dstack_grad, deps="og,in",
     doc="NumPy's ``dstack``.")


def _column_stack_grad(xp, p, og, ins, outs):
    cols = [x.reshape(-1, 1) if x.ndim < 2 else x for x in ins]
    pieces = _split_back(xp, og[0], cols, 1)
    return [g.reshape(x.shape) for g, x in zip(pieces, ins, strict=True)]


npop("_npi_column_stack", lambda xp, p, *a: xp.column_stack(a), var_args=True, grad=_column_stack_grad,
     deps="og,in", doc="NumPy's ``column_stack``.")


def _split_nout(p):
    return p.sections if p.sections else len(p.indices) + 1


_HSPLIT = -(2 ** 31)  # hsplit's axis: 1, or 0 for a 1-D array


def _axis(p, a):
    return (1 if a.ndim > 1 else 0) if p.axis == _HSPLIT else p.axis


def _one_or_all(parts):
    return parts[0] if len(parts) == 1 else tuple(parts)


def _split(xp, p, a):
    return _one_or_all(xp.split(a, p.sections if p.sections else list(p.indices), axis=_axis(p, a)))


def _split_grad(xp, p, og, ins, outs):
    return [xp.concatenate(og, axis=_axis(p, ins[0]))]


def _register_split():
    opdef = npop("_npi_split", _split, params={"indices": (Shape, ()), "sections": (int, 0), "axis": (int, 0)},
                 grad=_split_grad, deps="og,in", doc="NumPy's ``split`` / ``array_split`` (``sections`` or ``indices``).")
    cls = opdef.prop_cls
    cls.num_outputs = lambda self: _split_nout(self.params)
    cls.list_outputs = lambda self: [f"output{i}" for i in range(_split_nout(self.params))]
    return opdef


_register_split()


def _array_split(xp, p, a):
    return _one_or_all(xp.array_split(a, p.sections if p.sections else list(p.indices), axis=_axis(p, a)))


_asd = npop("_npi_array_split", _array_split, params={"indices": (Shape, ()), "sections": (int, 0), "axis": (int, 0)},
            grad=_split_grad, deps="og,in", doc="NumPy's ``array_split``.")
_asd.prop_cls.num_outputs = lambda self: _split_nout(self.params)
_asd.prop_cls.list_outputs = lambda self: [f"output{i}" for i in range(_split_nout(self.params))]


# -- selection --------------------------------------------------------------------------------------
def _where(xp, p, c, x, y):
    return xp.where(c, x, y).astype(np.promote_types(x.dtype, y.dtype) if x.dtype.kind == y.dtype.kind
                                    else (x.dtype if x.dtype.kind == "f" else y.dtype))


def _where_grad(xp, p, og, ins, outs):
    c, x, y = ins
    g = og[0]
    gc = c.astype(bool)
    return [None, unbroadcast(xp, xp.where(gc, g, 0), x.shape).astype(x.dtype),
            unbroadcast(xp, xp.where(gc, 0, g), y.shape).astype(y.dtype)]


npop("_npi_where", _where, arguments=("condition", "x", "y"), grad=_where_grad, deps="og,in",
     doc="NumPy's ``where`` of three arrays.")


def _where_scalar(xp, p, c, a):
    s = p.scalar
    r = xp.where(c, s, a) if p.scalar_is_x else xp.where(c, a, s)
    return r.astype(a.dtype)


def _where_scalar_grad(xp, p, og, ins, outs):
    c, a = ins
    mask = c.astype(bool)
    g = xp.where(mask, 0, og[0]) if p.scalar_is_x else xp.where(mask, og[0], 0)
    return [None, unbroadcast(xp, g, a.shape).astype(a.dtype)]


npop("_npi_where_scalar", _where_scalar, arguments=("condition", "a"),
     params={"scalar": (float, 0.0), "scalar_is_x": (bool, False)}, grad=_where_scalar_grad, deps="og,in",
     doc="NumPy's ``where`` with a scalar for ``x`` (``scalar_is_x``) or for ``y``.")


def _clip(xp, p, a):
    return xp.clip(a, p.a_min, p.a_max).astype(a.dtype)


def _clip_grad(xp, p, og, ins, outs):
    a = ins[0]
    m = xp.ones(a.shape, bool)
    if p.a_min is not None:
        m &= a >= p.a_min
    if p.a_max is not None:
        m &= a <= p.a_max
    return [(og[0] * m).astype(a.dtype)]


npop("_npi_clip", _clip, params={"a_min": (Optional[float], None), "a_max": (Optional[float], None)},
     grad=_clip_grad, deps="og,in", doc="NumPy's ``clip`` with scalar bounds.")


def _diag(xp, p, a):
    return xp.diag(a, p.k).copy()


def _diag_grad(xp, p, og, ins, outs):
    a = ins[0]
    if a.ndim == 1:
        return [xp.diagonal(og[0], p.k).copy()]
    g = xp.zeros(a.shape, og[0].dtype)
    n = og[0].shape[0]
    r = np.arange(n) + max(-p.k, 0)
    c = np.arange(n) + max(p.k, 0)
    g[r, c] = og[0]
    return [g]


npop("_npi_diag", _diag, params={"k": (int, 0)}, grad=_diag_grad, deps="og,in", doc="NumPy's ``diag``.")


def _diagonal_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = xp.zeros(a.shape, og[0].dtype)
    view = xp.diagonal(g, p.offset, p.axis1, p.axis2)
    view.setflags(write=True) if hasattr(view, "setflags") else None
    idx = np.indices(a.shape)
    mask = (idx[p.axis2] - idx[p.axis1]) == p.offset
    moved = xp.moveaxis(g, (p.axis1, p.axis2), (-2, -1))
    mm = np.moveaxis(mask, (p.axis1, p.axis2), (-2, -1))
    moved[mm] = og[0].reshape(-1) if og[0].ndim == 1 else og[0].reshape(-1)
    return [g]


npop("_npi_diagonal", lambda xp, p, a: xp.diagonal(a, p.offset, p.axis1, p.axis2).copy(),
     params={"offset": (int, 0), "axis1": (int, 0), "axis2": (int, 1)}, grad=_diagonal_grad, deps="og,in",
     doc="NumPy's ``diagonal``.")
npop("_npi_diagflat", lambda xp, p, a: xp.diagflat(a, p.k), params={"k": (int, 0)},
     grad=lambda xp, p, og, ins, outs: [xp.diagonal(og[0], p.k).reshape(ins[0].shape).copy()], deps="og,in",
     doc="NumPy's ``diagflat``.")
def _tri_grad(fn):
    def bwd(xp, p, og, ins, outs):
        g = getattr(xp, fn)(og[0], p.k)
        return [g.sum(axis=0) if ins[0].ndim == 1 else g]  # a 1-D input is broadcast to rows
    return bwd


npop("_npi_tril", lambda xp, p, a: xp.tril(a, p.k), params={"k": (int, 0)}, grad=_tri_grad("tril"), deps="og,in",
     doc="NumPy's ``tril``.")
npop("_npi_triu", lambda xp, p, a: xp.triu(a, p.k), params={"k": (int, 0)}, grad=_tri_grad("triu"), deps="og,in",
     doc="NumPy's ``triu``.")


def _take(xp, p, a, idx):
    return xp.take(a, idx.astype(np.int64), axis=p.axis, mode=p.mode)


def _take_grad(xp, p, og, ins, outs):
    a, idx = ins
    g = xp.zeros(a.shape, og[0].dtype)
    i = idx.astype(np.int64)
    if p.axis is None:
        n = a.size
        i = xp.clip(i, 0, n - 1) if p.mode == "clip" else i % max(n, 1)
        flat = g.reshape(-1)
        xp.add.at(flat, i.reshape(-1), og[0].reshape(-1))
        return [flat.reshape(a.shape), None]
    ax = p.axis % a.ndim
    n = a.shape[ax]
    i = xp.clip(i, 0, n - 1) if p.mode == "clip" else i % max(n, 1)
    gm = xp.moveaxis(g, ax, 0)
    ogm = xp.moveaxis(og[0], tuple(range(ax, ax + i.ndim)), tuple(range(i.ndim)))
    xp.add.at(gm, i, ogm)
    return [g, None]


npop("_npi_take", _take, arguments=("a", "indices"), params={"axis": (Optional[int], None), "mode": (str, "raise")},
     grad=_take_grad, deps="og,in", doc="NumPy's ``take``.")


def _pad(xp, p, a):
    kw: dict[str, Any] = {}
    if p.mode == "constant":
        kw["constant_values"] = p.constant_values
    return xp.pad(a, p.pad_width, mode=p.mode, **kw)


def _pad_grad(xp, p, og, ins, outs):
    a = ins[0]
    if p.mode != "constant":
        return [None]
    pw = np.broadcast_to(np.asarray(p.pad_width, dtype=np.int64).reshape(-1, 2) if np.ndim(p.pad_width) > 0
                         else np.full((1, 2), p.pad_width), (a.ndim, 2))
    sl = tuple(slice(int(lo), int(lo) + s) for (lo, _), s in zip(pw, a.shape, strict=True))
    return [og[0][sl]]


npop("_npi_pad", _pad, params={"pad_width": (Any, 0), "mode": (str, "constant"), "constant_values": (float, 0.0)},
     grad=_pad_grad, deps="og,in", doc="NumPy's ``pad`` (gradient for ``constant`` mode).")
