"""NDArray's fluent methods: ``x.sum(axis=1)`` is ``mx.nd.sum(x, axis=1)``, as in MXNet 1.9.

Each method calls the generated ``mx.nd`` function with the array as its first
input, so arguments, errors and asynchrony are the op's own.  The list is
MXNet 1.9.1's; a name whose op is not registered gets no method.

>>> import mxasync as mx
>>> x = mx.nd.array([[1, -2, 3], [4, 5, -6]])
>>> x.sum(axis=1).asnumpy().tolist(), float(x.abs().max().asscalar()), x.clip(0, 4).mean().shape
([2.0, 3.0], 6.0, (1,))
"""

from __future__ import annotations

from collections.abc import Callable

from ..base import MXAsyncError

__all__ = ["FLUENT_METHODS", "attach"]

# MXNet 1.9.1's NDArray methods that are a call of the op of the same name
FLUENT_METHODS = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "argmax", "argmax_channel",
    "argmin", "argsort", "broadcast_axes", "broadcast_like", "broadcast_to", "cbrt", "ceil", "clip", "cos",
    "cosh", "degrees", "depth_to_space", "diag", "exp", "expand_dims", "expm1", "fix", "flatten", "flip",
    "floor", "log", "log10", "log1p", "log2", "log_softmax", "max", "mean", "min", "nanprod", "nansum", "norm",
    "one_hot", "ones_like", "pad", "pick", "prod", "radians", "rcbrt", "reciprocal", "relu", "repeat",
    "reshape_like", "rint", "round", "rsqrt", "shape_array", "sigmoid", "sign", "sin", "sinh", "size_array",
    "slice", "slice_axis", "slice_like", "softmax", "softmin", "sort", "space_to_depth", "split", "split_v2",
    "sqrt", "square", "squeeze", "sum", "swapaxes", "take", "tan", "tanh", "tile", "topk", "transpose",
    "trunc", "zeros_like",
)


def _method(name: str, fn: Callable):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``mx.nd.{name}`` with this array as its first input.\n\n{fn.__doc__ or ''}"
    return method


def _broadcast_to(namespace: dict):
    op = namespace["broadcast_to"]

    def broadcast_to(self, shape):
        """Broadcast to ``shape``, which may have more (leading) axes than this array (MXNet's method;
        the op itself needs as many axes)."""
        shape = tuple(shape)
        if len(shape) < self.ndim:
            raise MXAsyncError(f"broadcast_to: cannot broadcast an array of shape {self.shape} to {shape}: "
                               "fewer axes")
        padded = (1,) * (len(shape) - self.ndim) + tuple(self.shape)
        src = self if padded == tuple(self.shape) else self.reshape(padded)
        return op(src, shape=shape)

    return broadcast_to


def _flatten(namespace: dict):
    op = namespace["flatten"]

    def flatten(self, inplace=False):
        """``(d1, d2*...*dk)``: a copy, or with ``inplace=True`` a view sharing this array's memory."""
        return self.reshape((0, -1)) if inplace else op(self)

    return flatten


def _expand_dims(namespace: dict):
    op = namespace["expand_dims"]

    def expand_dims(self, axis, inplace=False):
        """A new axis of size 1 at ``axis``: a copy, or with ``inplace=True`` a view."""
        if not inplace:
            return op(self, axis=axis)
        axis = int(axis)
        if not -self.ndim - 1 <= axis <= self.ndim:
            raise MXAsyncError(f"expand_dims: axis {axis} is out of range for a {self.ndim}-d array")
        shape = list(self.shape)
        shape.insert(axis % (self.ndim + 1), 1)
        return self.reshape(shape)

    return expand_dims


def _squeeze(namespace: dict):
    op = namespace["squeeze"]

    def squeeze(self, axis=None, inplace=False):
        """Drop axes of size 1 (all, or those in ``axis``): a copy, or with ``inplace=True`` a view."""
        if not inplace:
            return op(self, axis=axis)
        axes = [axis] if isinstance(axis, int) else list(axis or ())
        if len(set(axes)) != len(axes):
            raise MXAsyncError(f"squeeze: axis {axis} names an axis twice")
        for a in axes:
            if not -self.ndim <= a < self.ndim:
                raise MXAsyncError(f"squeeze: axis {a} is out of range for a {self.ndim}-d array")
            if self.shape[a] != 1:
                raise MXAsyncError(f"squeeze: axis {a} has size {self.shape[a]}, not 1")
        drop = {a % self.ndim for a in axes} if axes else {i for i, d in enumerate(self.shape) if d == 1}
        return self.reshape([d for i, d in enumerate(self.shape) if i not in drop] or [1])

    return squeeze


# methods that do more than call the op (MXNet's own Python code)
_SPECIAL = {"broadcast_to": _broadcast_to, "flatten": _flatten, "expand_dims": _expand_dims, "squeeze": _squeeze}


def attach(cls: type, namespace: dict, names: dict[str, str] | None = None, special: bool = True) -> list[str]:
    """Give ``cls`` a method for every fluent name with a function in ``namespace``; returns them.

    ``names`` maps extra method names to op names (``{"astype": "cast"}``); ``special=False``
    skips the NDArray-only methods that inspect shapes (``mx.sym`` uses it).
    """
    added = []
    table = {**{n: n for n in FLUENT_METHODS}, **(names or {})}
    for name, op_name in table.items():
        fn = namespace.get(op_name)
        if fn is not None and name not in cls.__dict__:
            method = _SPECIAL[name](namespace) if special and name in _SPECIAL else _method(name, fn)
            setattr(cls, name, method)
            added.append(name)
    return added
