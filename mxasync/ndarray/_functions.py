"""MXNet 1.9's Python-level ``mx.nd`` functions that are not a single op.

The arithmetic and comparison functions (``mx.nd.maximum(x, 0)``,
``mx.nd.add(a, b)``...) pick the op the way the Python operators do: two
NDArrays broadcast (``broadcast_*``), an NDArray and a number use the scalar
op (mirrored when the number comes first), two numbers give a number.

>>> import mxasync as mx
>>> x = mx.nd.array([[-1, 2], [3, -4]])
>>> mx.nd.maximum(x, 0).asnumpy().tolist(), mx.nd.subtract(10, x).asnumpy()[0].tolist()
([[0.0, 2.0], [3.0, 0.0]], [11.0, 8.0])
>>> mx.nd.greater(1, x).asnumpy().tolist()   # 1 > x, i.e. x < 1
[[1.0, 0.0], [0.0, 1.0]]
>>> mx.nd.moveaxis(mx.nd.zeros((2, 3, 4)), 0, -1).shape, mx.nd.concatenate([x, x]).shape
((3, 4, 2), (4, 2))
"""

from __future__ import annotations

import operator

import numpy as np

from ..base import MXAsyncError, MXAsyncValueError
from ..runtime.context import Context, current_context
from ._invoke import invoke
from .ndarray import NDArray, array

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum", "minimum",
    "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or",
    "logical_xor", "concatenate", "moveaxis", "eye", "linspace", "onehot_encode", "histogram",
]

_NUMBER = (int, float, bool, np.number)


def _logical(fn):
    return lambda a, b: float(fn(bool(a), bool(b)))


# name: (broadcast op, scalar op with the array on the left, scalar op with the number on the left,
#        the same on two numbers)
_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", operator.add),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", operator.mod),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar", lambda a, b: float(a == b)),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", lambda a, b: float(a != b)),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar", lambda a, b: float(a > b)),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar",
                      lambda a, b: float(a >= b)),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar", lambda a, b: float(a < b)),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                     lambda a, b: float(a <= b)),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    _logical(operator.and_)),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar", _logical(operator.or_)),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    _logical(operator.xor)),
}


def _make_binary(name: str, ops: tuple):
    broadcast_op, scalar_op, rscalar_op, on_numbers = ops

    def fn(lhs, rhs):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
            return invoke(broadcast_op, [lhs, rhs])
        if isinstance(lhs, NDArray) and isinstance(rhs, _NUMBER):
            return invoke(scalar_op, [lhs], scalar=float(rhs))
        if isinstance(lhs, _NUMBER) and isinstance(rhs, NDArray):
            return invoke(rscalar_op, [rhs], scalar=float(lhs))
        if isinstance(lhs, _NUMBER) and isinstance(rhs, _NUMBER):
            return on_numbers(lhs, rhs)
        raise MXAsyncError(f"mx.nd.{name}: operands must be NDArrays or numbers, got "
                           f"{type(lhs).__name__} and {type(rhs).__name__}")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(lhs, rhs)``: ``{broadcast_op}`` on two NDArrays (broadcasting), "
                  f"``{scalar_op}`` with a number (MXNet's ``mx.nd.{name}``).")
    return fn


add = _make_binary("add", _BINARY["add"])
subtract = _make_binary("subtract", _BINARY["subtract"])
multiply = _make_binary("multiply", _BINARY["multiply"])
divide = _make_binary("divide", _BINARY["divide"])
modulo = _make_binary("modulo", _BINARY["modulo"])
power = _make_binary("power", _BINARY["power"])
maximum = _make_binary("maximum", _BINARY["maximum"])
minimum = _make_binary("minimum", _BINARY["minimum"])
equal = _make_binary("equal", _BINARY["equal"])
not_equal = _make_binary("not_equal", _BINARY["not_equal"])
greater = _make_binary("greater", _BINARY["greater"])
greater_equal = _make_binary("greater_equal", _BINARY["greater_equal"])
lesser = _make_binary("lesser", _BINARY["lesser"])
lesser_equal = _make_binary("lesser_equal", _BINARY["lesser_equal"])
logical_and = _make_binary("logical_and", _BINARY["logical_and"])
logical_or = _make_binary("logical_or", _BINARY["logical_or"])
logical_xor = _make_binary("logical_xor", _BINARY["logical_xor"])
true_divide = divide


def concatenate(arrays, axis: int = 0, always_copy: bool = True) -> NDArray:
    """Join ``arrays`` along ``axis`` (MXNet's ``mx.nd.concatenate``); one array is copied unless
    ``always_copy`` is False."""
    arrays = list(arrays)
    if not arrays:
        raise MXAsyncError("mx.nd.concatenate: arrays must not be empty")
    if len(arrays) == 1:
        return arrays[0].copy() if always_copy else arrays[0]
    return invoke("Concat", arrays, dim=axis, num_args=len(arrays))


def _axes(value, ndim: int, what: str) -> list[int]:
    try:
        axes = [operator.index(value)] if not hasattr(value, "__iter__") else [operator.index(a) for a in value]
    except TypeError:
        raise MXAsyncValueError(f"mx.nd.moveaxis: {what} must be an int or a sequence of ints, got {value!r}") from None
    for a in axes:
        if not -ndim <= a < ndim:
            raise MXAsyncValueError(f"mx.nd.moveaxis: {what}={a} is out of range for a {ndim}-D array")
    axes = [a % ndim for a in axes]
    if len(set(axes)) != len(axes):
        raise MXAsyncValueError(f"mx.nd.moveaxis: repeated axis in {what} {value!r}")
    return axes


def moveaxis(tensor: NDArray, source, destination) -> NDArray:
    """Move axes ``source`` of ``tensor`` to positions ``destination`` (ints or sequences of ints;
    the other axes keep their order), as numpy.moveaxis."""
    ndim = tensor.ndim
    src, dst = _axes(source, ndim, "source"), _axes(destination, ndim, "destination")
    if len(src) != len(dst):
        raise MXAsyncValueError(f"mx.nd.moveaxis: source {source!r} and destination {destination!r} must have "
                                "the same number of elements")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return invoke("transpose", [tensor], axes=tuple(order))


def eye(N: int, M: int = 0, k: int = 0, ctx: Context | None = None, dtype=None, **kwargs) -> NDArray:
    """A 2-D array with ones on diagonal ``k`` (``M=0``: square)."""
    return invoke("_eye", [], N=N, M=M, k=k, ctx=ctx or current_context(),
                  dtype=np.dtype(dtype or np.float32).name)


def linspace(start: float, stop: float, num: int, endpoint: bool = True, ctx: Context | None = None,
             dtype=None) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (``stop`` excluded unless ``endpoint``)."""
    values = np.linspace(start, stop, int(num), endpoint=endpoint)
    return array(values, ctx=ctx, dtype=dtype or np.float32)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """MXNet's legacy one-hot: write the encoding of ``indices`` into ``out`` (N x depth); returns ``out``."""
    if out.ndim != 2 or indices.shape != (out.shape[0],):
        raise MXAsyncError(f"mx.nd.onehot_encode: indices of shape {indices.shape} need out of shape "
                           f"({indices.shape[0] if indices.ndim == 1 else 'N'}, depth), got {out.shape}")
    return invoke("one_hot", [indices], depth=out.shape[1], dtype=np.dtype(out.dtype).name, out=out)


def histogram(a: NDArray, bins=10, range=None):  # noqa: A002 - MXNet's argument name
    """``(counts, bin_edges)`` of the values of ``a``: ``bins`` equal bins over ``range`` (default: the
    data's min and max), or the edges given as an NDArray."""
    data = a.asnumpy().ravel()
    if isinstance(bins, NDArray):
        counts, edges = np.histogram(data, bins=bins.asnumpy())
    else:
        if range is None:
            raise MXAsyncError("mx.nd.histogram: range=(min, max) is required with a bin count (as in MXNet)")
        counts, edges = np.histogram(data, bins=int(bins), range=tuple(range))
    return array(counts, ctx=a.context, dtype=np.int64), array(edges, ctx=a.context, dtype=a.dtype)
