"""Small helpers shared by op families (axes, broadcasting, shape checks)."""

from __future__ import annotations

from typing import Any

__all__ = ["norm_axes", "unbroadcast", "broadcast_shape", "reduce_axes", "prod", "check_roi_inputs"]


def prod(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def norm_axes(prop, axis, ndim: int, exclude: bool = False) -> tuple[int, ...]:
    """Normalize MXNet's axis param (None / int / tuple, negative allowed) to sorted positive axes."""
    if axis is None or axis == ():
        axes = tuple(range(ndim))
        return () if exclude else axes
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        b = a + ndim if a < 0 else a
        if not 0 <= b < ndim:
            raise prop.error(f"axis={axis} is out of range for an input of {ndim} dimensions")
        out.append(b)
    if exclude:
        out = [a for a in range(ndim) if a not in out]
    return tuple(sorted(set(out)))


def reduce_axes(prop, shape, axis, keepdims: bool, exclude: bool = False) -> tuple[tuple[int, ...], tuple]:
    axes = norm_axes(prop, axis, len(shape), exclude)
    if keepdims:
        out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        # MXNet 1.x has no 0-d arrays: reducing every axis gives shape (1,)
        out = tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)
    return axes, out


def broadcast_shape(prop, a: tuple, b: tuple, names=("lhs", "rhs")) -> tuple:
    """NumPy broadcasting of two shapes, with an error naming the op and both shapes."""
    if a == b:
        return a
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb, strict=False):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise prop.error(f"operands could not be broadcast together: {names[0]} {a}, {names[1]} {b}")
    return tuple(out)


def unbroadcast(xp, g: Any, shape: tuple) -> Any:
    """Sum ``g`` over the axes along which an input of ``shape`` was broadcast."""
    if g.shape == tuple(shape):
        return g
    nd = g.ndim - len(shape)
    if nd:
        g = g.sum(axis=tuple(range(nd)))
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def check_roi_inputs(prop, d, rois) -> None:
    """The region-pooling ops' inputs: (N, C, H, W) feature maps and (R, 5) regions."""
    if len(d) != 4:
        raise prop.error(f"data has shape {tuple(d)}; it must be (N, C, H, W)")
    if len(rois) != 2 or rois[1] != 5:
        raise prop.error(f"rois has shape {tuple(rois)}; it must be (R, 5): [batch_index, x1, y1, x2, y2]")
