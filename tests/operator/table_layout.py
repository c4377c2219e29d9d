"""Table rows: the ops of ``ops_like.py``, ``ops_layout.py`` and ``ops_misc.py``.

The numpy references here are independent of the kernels; the orderings numpy cannot
state plainly (Pad's reflect/edge corners, depth_to_space, reshape_like ranges,
split_v2) are also pinned by MXNet's own outputs in ``test_layout_ops.py``.
"""

from __future__ import annotations

import numpy as np
from cases import Case, distinct, uniform


def _pairs(pw):
    return [(pw[i], pw[i + 1]) for i in range(0, len(pw), 2)]


def _pad(x, mode, pad_width, constant_value=0.0):
    if mode == "constant":
        return np.pad(x, _pairs(pad_width), mode="constant", constant_values=constant_value)
    return np.pad(x, _pairs(pad_width), mode=mode)


def _d2s(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    out = np.empty((n, c // (b * b), h * b, w * b), x.dtype)
    for i in range(b):  # channel block (i, j) fills the pixels at offset (i, j) of every b x b cell
        for j in range(b):
            out[:, :, i::b, j::b] = x[:, (i * b + j) * (c // (b * b)):(i * b + j + 1) * (c // (b * b))]
    return out


def _s2d(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    return np.concatenate([x[:, :, i::b, j::b] for i in range(b) for j in range(b)], axis=1)


def _split(x, indices_or_sections, axis=0, squeeze_axis=False):
    parts = np.split(x, indices_or_sections, axis=axis)
    return tuple(np.squeeze(p, axis) if squeeze_axis else p for p in parts)


def _softmin(x, axis=-1, temperature=None, dtype=None):
    z = -x.astype(np.float64) / (temperature or 1.0)
    e = np.exp(z - z.max(axis, keepdims=True))
    return (e / e.sum(axis, keepdims=True)).astype(dtype or x.dtype)


def _slice_assign(lhs, rhs, begin, end, step=()):
    out = lhs.copy()
    out[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin), strict=True))] = rhs
    return out


def _slice_assign_scalar(x, begin, end, step=(), scalar=0.0):
    return _slice_assign(x, scalar, begin, end, step)


PW4 = (0, 0, 0, 0, 1, 2, 2, 1)
CASES = [
    Case("broadcast_like", [((1, 3, 1), (2, 3, 2))], ref=lambda lhs, rhs: np.broadcast_to(lhs, rhs.shape)),
    Case("broadcast_like", [((1, 3), (4, 5))], ref=lambda lhs, rhs, lhs_axes, rhs_axes: np.broadcast_to(lhs, (5, 3)),
         params=dict(lhs_axes=(0,), rhs_axes=(-1,)), name="broadcast_like-axes"),
    Case("reshape_like", [((2, 3, 4), (6, 4))], ref=lambda lhs, rhs: lhs.reshape(rhs.shape)),
    Case("reshape_like", [((6, 4), (2, 3, 5))], ref=lambda lhs, rhs, **kw: lhs.reshape(2, 3, 4),
         params=dict(lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2), name="reshape_like-ranges"),
    Case("reshape_like", [((2, 12), (5, 3, 4))], ref=lambda lhs, rhs, **kw: lhs.reshape(2, 3, 4),
         params=dict(lhs_begin=-1, rhs_begin=1, rhs_end=None), name="reshape_like-negative"),
    Case("slice_like", [((3, 4, 5), (2, 3, 4))], ref=lambda x, like: x[:2, :3, :4]),
    Case("slice_like", [((3, 4, 5), (2, 1, 4))], ref=lambda x, like, axes: x[:2, :, :4], params=dict(axes=(0, -1)),
         name="slice_like-axes"),
    Case("reverse", [((2, 3, 4),)], ref=lambda x, axis: x[:, ::-1], params=dict(axis=1)),
    Case("flip", [((2, 3, 4),)], ref=lambda x, axis: x[::-1, :, ::-1], params=dict(axis=(0, -1)),
         name="flip-axes"),
    Case("reverse", [((2, 3),)], ref=lambda x, axis: x[::-1], params=dict(axis=(0, 1, 1)), name="reverse-twice"),
    Case("SwapAxis", [((2, 3, 4),)], ref=lambda x, dim1, dim2: np.swapaxes(x, 0, 2), params=dict(dim1=0, dim2=2)),
    Case("swapaxes", [((2, 3, 4),)], ref=lambda x, dim1, dim2: np.swapaxes(x, 1, 2), params=dict(dim1=-1, dim2=1),
         name="swapaxes-negative"),
    *[Case("Pad", [((1, 2, 3, 3),)], ref=_pad, params=dict(mode=m, pad_width=PW4, **kw), name=f"Pad-{m}")
      for m, kw in (("constant", dict(constant_value=-0.5)), ("edge", {}), ("reflect", {}))],
    Case("pad", [((1, 1, 2, 2, 3),)], ref=_pad, params=dict(mode="reflect", pad_width=(0, 0, 0, 0, 1, 0, 0, 1, 2, 1)),
         name="pad-5d-reflect"),
    Case("pad", [((1, 1, 2, 2, 2),)], ref=_pad, params=dict(mode="edge", pad_width=(0, 0, 0, 0, 0, 2, 1, 0, 1, 1)),
         name="pad-5d-edge"),
    Case("softmin", [((2, 5),)], ref=_softmin),
    Case("softmin", [((3, 2, 2),)], ref=_softmin, params=dict(axis=0, temperature=2.0), name="softmin-axis0-t"),
    Case("softmin", [((2, 3),)], ref=_softmin, params=dict(dtype="float64"), name="softmin-dtype"),
    Case("argmax_channel", [((2, 3, 4),), ((3, 5),)], ref=lambda x: np.argmax(x, 1).astype(x.dtype), gens=distinct(),
         grad="zero"),
    Case("depth_to_space", [((2, 8, 2, 3),)], ref=_d2s, params=dict(block_size=2)),
    Case("space_to_depth", [((1, 2, 4, 6),)], ref=_s2d, params=dict(block_size=2)),
    Case("split_v2", [((6, 2),)], ref=_split, params=dict(indices_or_sections=3)),
    Case("split_v2", [((2, 5),)], ref=_split, params=dict(indices_or_sections=(1, 3), axis=1), name="split_v2-indices"),
    Case("split_v2", [((2, 3, 2),)], ref=_split, params=dict(indices_or_sections=3, axis=-2, squeeze_axis=True),
         name="split_v2-squeeze"),
    Case("_split_v2", [((2, 5),)], ref=lambda x, indices, axis: _split(x, indices[1:], axis),
         params=dict(indices=(0, 2), axis=1), name="_split_v2-raw"),
    Case("_slice_assign", [((4, 5), (2, 2))], ref=_slice_assign,
         params=dict(begin=(1, 0), end=(3, 5), step=(1, 3)), gens=[uniform(), uniform(2, 3)]),
    Case("_slice_assign", [((4, 5), (2, 5))], ref=_slice_assign, params=dict(begin=(-1,), end=(0,), step=(-2,)),
         name="slice_assign-negative-step"),
    Case("_slice_assign_scalar", [((4, 5),)], ref=_slice_assign_scalar,
         params=dict(scalar=2.5, begin=(None, 1), end=(None, -1))),
]
