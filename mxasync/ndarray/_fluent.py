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


def _broadcast_to(ops):
    op = ops.get("broadcast_to")

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


def _flatten(ops):
    op = ops.get("flatten")

    def flatten(self, inplace=False):
        """``(d1, d2*...*dk)``: a copy, or with ``inplace=True`` a view sharing this array's memory."""
        return self.reshape((0, -1)) if inplace else op(self)

    return flatten


def _expand_dims(ops):
    op = ops.get("expand_dims")

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


def _squeeze(ops):
    op = ops.get("squeeze")

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


class _OnFirstUse:
    """A fluent method not made yet: the first look-up makes it (its op's family loads then) and puts the
    plain function in its place on the class, so later calls pay nothing for the laziness."""

    def __init__(self, owner: type, name: str, op_name: str, ops, special: bool):
        self._owner, self._name, self._op_name, self._ops, self._special = owner, name, op_name, ops, special

    def __get__(self, obj, cls=None):
        fn = _SPECIAL[self._name](self._ops) if self._special else _method(self._name, self._ops.get(self._op_name))
        setattr(self._owner, self._name, fn)
        return fn if obj is None else fn.__get__(obj, cls)


def attach(cls: type, ops, names: dict[str, str] | None = None, special: bool = True) -> list[str]:
    """Give ``cls`` a method for every fluent name that ``ops`` (an ``OpNamespace``) has; returns them.

    ``names`` maps extra method names to op names (``{"astype": "cast"}``); ``special=False``
    skips the NDArray-only methods that inspect shapes (``mx.sym`` uses it).  Each method is
    made on its first look-up.
    """
    added = []
    table = {**{n: n for n in FLUENT_METHODS}, **(names or {})}
    for name, op_name in table.items():
        if ops.has(op_name) and name not in cls.__dict__:
            setattr(cls, name, _OnFirstUse(cls, name, op_name, ops, special and name in _SPECIAL))
            added.append(name)
    return added
