"""``mx.np`` creation, shape and layout functions, written once against a frontend ``F``."""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..base import MXAsyncTypeError
from ._exports import exporter
from ._frontend import default_float

FUNCS: dict[str, Any] = {}
_export = exporter(FUNCS)


def _shape(shape, name: str = "np"):
    """``shape`` as a tuple of ints, refused as NumPy refuses it (``(2.5, 3)``, ``True``, ``'a'``) rather
    than truncated: an MXNetError that is also a TypeError."""
    if isinstance(shape, (int, _np.integer)) and not isinstance(shape, (bool, _np.bool_)):
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is None or isinstance(shape, (str, bytes)) or any(
            isinstance(d, (bool, _np.bool_)) or not isinstance(d, (int, _np.integer)) for d in dims):
        raise MXAsyncTypeError(f"{name}: expected a sequence of integers or a single integer as the shape, got "
                               f"{shape!r}")
    return tuple(int(d) for d in dims)


def _dtype(dtype, default=None):
    if dtype is None:
        return default or default_float()
    return _np.dtype(dtype).name


def _order(order, name):
    if order != "C":
        raise NotImplementedError(f"np.{name}: order={order!r}: only 'C' is supported (as in MXNet)")


# -- creation ---------------------------------------------------------------------------------------
@_export
def _zeros(F, shape, dtype=None, order="C", ctx=None, device=None):
    _order(order, "zeros")
    return F.op("_npi_full", [], ctx=ctx or device, shape=_shape(shape, "np.zeros"), dtype=_dtype(dtype), value=0.0)


@_export
def _ones(F, shape, dtype=None, order="C", ctx=None, device=None):
    _order(order, "ones")
    return F.op("_npi_full", [], ctx=ctx or device, shape=_shape(shape, "np.ones"), dtype=_dtype(dtype), value=1.0)


@_export
def _empty(F, shape, dtype=None, order="C", ctx=None, device=None):
    _order(order, "empty")
    return F.op("_npi_full", [], ctx=ctx or device, shape=_shape(shape, "np.empty"), dtype=_dtype(dtype), value=0.0)


@_export
def _full(F, shape, fill_value, dtype=None, order="C", ctx=None, out=None, device=None):
    _order(order, "full")
    if F.is_array(fill_value):
        src = fill_value if dtype is None else F.op("_npi_copy", [fill_value], dtype=_dtype(dtype))
        return F.op("_npi_broadcast_to", [src], out=out, shape=_shape(shape, "np.full"))
    if dtype is None:
        dtype = "bool" if isinstance(fill_value, bool) else None
    return F.op("_npi_full", [], out=out, ctx=ctx or device, shape=_shape(shape, "np.full"), dtype=_dtype(dtype),
                value=fill_value if isinstance(fill_value, bool) else float(fill_value))


def _like(F, a, value, dtype, out=None):
    return F.op("_npi_full_like", [a], out=out, fill_value=value, dtype=None if dtype is None else _dtype(dtype))


@_export
def _zeros_like(F, a, dtype=None, order="C", ctx=None, out=None):
    return _like(F, a, 0.0, dtype, out)


@_export
def _ones_like(F, a, dtype=None, order="C", ctx=None, out=None):
    return _like(F, a, 1.0, dtype, out)


@_export
def _empty_like(F, prototype, dtype=None, order="C", subok=False, shape=None):
    return _like(F, prototype, 0.0, dtype)


@_export
def _full_like(F, a, fill_value, dtype=None, order="C", ctx=None, out=None):
    return _like(F, a, fill_value if isinstance(fill_value, bool) else float(fill_value), dtype, out)


@_export
def _arange(F, start, stop=None, step=1, dtype=None, ctx=None, device=None):
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if dtype is None:
        dtype = default_float()
    return F.op("_npi_arange", [], ctx=ctx or device, start=float(start), stop=float(stop), step=float(step),
                dtype=_dtype(dtype))


@_export
def _eye(F, N, M=None, k=0, dtype=None, ctx=None, **kwargs):
    return F.op("_npi_eye", [], ctx=ctx, N=int(N), M=None if M is None else int(M), k=int(k), dtype=_dtype(dtype))


@_export
def _identity(F, n, dtype=None, ctx=None):
    return F.op("_npi_eye", [], ctx=ctx, N=int(n), dtype=_dtype(dtype))


@_export
def _linspace(F, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    res = F.op("_npi_linspace", [], ctx=ctx, start=float(start), stop=float(stop), num=int(num),
               endpoint=bool(endpoint), dtype=_dtype(dtype))
    if retstep:
        step = (stop - start) / max(num - 1 if endpoint else num, 1)
        return res, step
    return res


@_export
def _logspace(F, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    return F.op("_npi_logspace", [], ctx=ctx, start=float(start), stop=float(stop), num=int(num),
                endpoint=bool(endpoint), base=float(base), dtype=_dtype(dtype))


@_export
def _indices(F, dimensions, dtype=None, ctx=None):
    return F.op("_npi_indices", [], ctx=ctx, dimensions=_shape(dimensions, "np.indices"), dtype=_dtype(dtype, "int64"))


@_export
def _copy(F, a, out=None):
    return F.op("_npi_copy", [a], out=out)


# -- shape ------------------------------------------------------------------------------------------
@_export
def _reshape(F, a, newshape, order="C"):
    return F.op("_npi_reshape", [a], newshape=_shape(newshape, "np.reshape"), order=order)


@_export
def _ravel(F, x, order="C"):
    return F.op("_npi_ravel", [x])


@_export
def _flatten(F, a, order="C"):
    return F.op("_npi_ravel", [a])


@_export
def _squeeze(F, x, axis=None, out=None):
    return F.op("_npi_squeeze", [x], out=out, axis=axis)


@_export
def _expand_dims(F, a, axis):
    return F.op("_npi_expand_dims", [a], axis=axis)


@_export
def _broadcast_to(F, array, shape):
    return F.op("_npi_broadcast_to", [array], shape=_shape(shape, "np.broadcast_to"))


@_export
def _broadcast_arrays(F, *args):
    shape = _np.broadcast_shapes(*[a.shape for a in args])
    return [F.op("_npi_broadcast_to", [a], shape=shape) for a in args]


def _atleast(ndim):
    def f(F, *arys):
        res = [F.op("_npi_atleast", [a], ndim=ndim) for a in arys]
        return res[0] if len(res) == 1 else res
    f.__name__ = f"atleast_{ndim}d"
    return f


for _d in (1, 2, 3):
    _export(_atleast(_d), f"atleast_{_d}d")


@_export
def _transpose(F, a, axes=None):
    if axes is not None:
        axes = tuple(int(x) for x in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"np.transpose: repeated axis in {axes}")
    return F.op("_npi_transpose", [a], axes=axes)


@_export
def _swapaxes(F, a, axis1, axis2):
    return F.op("_npi_swapaxes", [a], axis1=int(axis1), axis2=int(axis2))


@_export
def _moveaxis(F, a, source, destination):
    return F.op("_npi_moveaxis", [a], source=source if isinstance(source, int) else tuple(source),
                destination=destination if isinstance(destination, int) else tuple(destination))


@_export
def _rollaxis(F, a, axis, start=0):
    n = a.ndim
    axis %= n
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return _moveaxis(F, a, axis, start)


@_export
def _flip(F, m, axis=None, out=None):
    return F.op("_npi_flip", [m], out=out, axis=axis)


@_export
def _flipud(F, m):
    return F.op("_npi_flip", [m], axis=0)


@_export
def _fliplr(F, m):
    return F.op("_npi_flip", [m], axis=1)


@_export
def _roll(F, a, shift, axis=None):
    return F.op("_npi_roll", [a], shift=shift if isinstance(shift, int) else tuple(shift), axis=axis)


@_export
def _rot90(F, m, k=1, axes=(0, 1)):
    return F.op("_npi_rot90", [m], k=int(k), axes=tuple(axes))


@_export
def _tile(F, A, reps):
    return F.op("_npi_tile", [A], reps=reps if isinstance(reps, int) else tuple(reps))


@_export
def _repeat(F, a, repeats, axis=None):
    return F.op("_npi_repeat", [a], repeats=int(repeats), axis=axis)


def _seq(arrays):
    return list(arrays)


@_export
def _concatenate(F, seq, axis=0, out=None):
    seq = _seq(seq)
    return F.op("_npi_concatenate", seq, out=out, axis=axis, num_args=len(seq))


@_export
def _append(F, arr, values, axis=None):
    return _concatenate(F, [arr, values], axis=axis)


@_export
def _stack(F, arrays, axis=0, out=None):
    arrays = _seq(arrays)
    return F.op("_npi_stack", arrays, out=out, axis=axis, num_args=len(arrays))


@_export
def _vstack(F, arrays, out=None):
    arrays = _seq(arrays)
    return F.op("_npi_vstack", arrays, out=out, num_args=len(arrays))


FUNCS["row_stack"] = FUNCS["vstack"]


@_export
def _hstack(F, arrays):
    arrays = _seq(arrays)
    return F.op("_npi_hstack", arrays, num_args=len(arrays))


@_export
def _dstack(F, arrays):
    arrays = _seq(arrays)
    return F.op("_npi_dstack", arrays, num_args=len(arrays))


@_export
def _column_stack(F, tup):
    tup = _seq(tup)
    return F.op("_npi_column_stack", tup, num_args=len(tup))


def _split_params(indices_or_sections):
    if isinstance(indices_or_sections, (int, _np.integer)):
        return {"sections": int(indices_or_sections)}
    return {"indices": tuple(int(i) for i in indices_or_sections)}


@_export
def _split(F, ary, indices_or_sections, axis=0):
    res = F.op("_npi_split", [ary], axis=axis, **_split_params(indices_or_sections))
    return list(res) if isinstance(res, (list, tuple)) else [res]


@_export
def _array_split(F, ary, indices_or_sections, axis=0):
    res = F.op("_npi_array_split", [ary], axis=axis, **_split_params(indices_or_sections))
    return list(res) if isinstance(res, (list, tuple)) else [res]


@_export
def _hsplit(F, ary, indices_or_sections):
    return _split(F, ary, indices_or_sections, axis=_HSPLIT_AXIS)


_HSPLIT_AXIS = -(2 ** 31)  # "axis 1, or 0 for a 1-D array": decided in the kernel (symbols have no ndim)


@_export
def _vsplit(F, ary, indices_or_sections):
    return _split(F, ary, indices_or_sections, axis=0)


@_export
def _dsplit(F, ary, indices_or_sections):
    return _split(F, ary, indices_or_sections, axis=2)


@_export
def _diag(F, v, k=0):
    return F.op("_npi_diag", [v], k=int(k))


@_export
def _diagonal(F, a, offset=0, axis1=0, axis2=1):
    return F.op("_npi_diagonal", [a], offset=int(offset), axis1=int(axis1), axis2=int(axis2))


@_export
def _diagflat(F, v, k=0):
    return F.op("_npi_diagflat", [v], k=int(k))


@_export
def _trace(F, a, offset=0, axis1=0, axis2=1, out=None):
    d = _diagonal(F, a, offset, axis1, axis2)
    return F.op("_npi_sum", [d], out=out, axis=-1)


@_export
def _tril(F, m, k=0):
    return F.op("_npi_tril", [m], k=int(k))


@_export
def _triu(F, m, k=0):
    return F.op("_npi_triu", [m], k=int(k))


@_export
def _take(F, a, indices, axis=None, mode="raise", out=None):
    if not F.is_array(indices):
        indices = F.asarray(_np.asarray(indices), dtype="int64")
    return F.op("_npi_take", [a, indices], out=out, axis=axis, mode="clip" if mode == "clip" else "wrap"
                if mode == "wrap" else "raise")


@_export
def _pad(F, x, pad_width, mode="constant", **kwargs):
    pw = _np.asarray(pad_width).tolist()
    pw = tuple(tuple(p) if isinstance(p, list) else p for p in pw) if isinstance(pw, list) else pw
    return F.op("_npi_pad", [x], pad_width=pw, mode=mode, constant_values=float(kwargs.get("constant_values", 0)))


@_export
def _shape_fn(F, a):
    return a.shape


FUNCS["shape"] = FUNCS.pop("shape_fn")
FUNCS["shape"].__name__ = "shape"


@_export
def _ndim(F, a):
    return a.ndim


@_export
def _size(F, a, axis=None):
    return a.size if axis is None else a.shape[axis]
