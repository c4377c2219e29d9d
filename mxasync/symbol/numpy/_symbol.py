"""``mx.sym.np._Symbol``: a symbol whose operators and methods build NumPy-interface ops, and
the symbolic frontend that ``mx.sym.np`` / ``mx.sym.npx`` functions are bound to.

>>> import mxasync as mx
>>> x = mx.sym.var("x").as_np_ndarray()
>>> y = mx.sym.np.sum(x * 2, axis=0)
>>> type(y).__name__, y.infer_shape(x=(2, 3))[1]
('_Symbol', [(3,)])
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as _np

from ...numpy._api_registry import FUNCS as _NP_FUNCS
from ...numpy._frontend import bind
from ...numpy.multiarray import _split_key_symbolic
from ...operator.numpy import dunders as _dunders
from ..register import create
from ..symbol import Symbol

__all__ = ["_Symbol", "SymFrontend", "SYM"]


class SymFrontend:
    """Graph frontend: an op call becomes a node; results are ``_Symbol``."""

    kind = "symbol"

    def is_array(self, x: Any) -> bool:
        return isinstance(x, Symbol)

    def asarray(self, x: Any, dtype: Any = None, ctx: Any = None) -> Any:
        if isinstance(x, Symbol):
            return x
        raise TypeError(f"mx.sym.np: expected a Symbol, got {type(x).__name__} (constants have no symbolic form)")

    def wrap(self, s: Any) -> Any:
        if isinstance(s, Symbol):
            out = [_Symbol([h]) for h in s._heads]
            return out[0] if len(out) == 1 else out
        return s

    def op(self, name: str, inputs: list, out: Any = None, ctx: Any = None, **params: Any) -> Any:
        if out is not None:
            raise NotImplementedError(f"mx.sym.np: {name} has no out= in a symbolic graph")
        for x in inputs:
            if not isinstance(x, Symbol):
                raise TypeError(f"mx.sym.np ({name}): inputs must be Symbols, got {type(x).__name__}")
        params = {k: "None" if v is None else v for k, v in params.items()}  # None is a value here (axis=None)
        return self.wrap(create(name, list(inputs), params, hint=name.replace("_npi_", "").replace("_npx_", "")))


SYM = SymFrontend()
_F = bind(SYM, _NP_FUNCS)


class _Symbol(Symbol):
    """A symbol with NumPy's semantics (``mx.sym.np._Symbol``)."""

    __slots__ = ()

    def as_nd_ndarray(self) -> Symbol:
        return Symbol(list(self._heads))

    def as_np_ndarray(self) -> _Symbol:
        return self

    def __iter__(self):
        return (_Symbol([h]) for h in self._heads)

    def __getitem__(self, key):
        if len(self._heads) > 1 and isinstance(key, (int, _np.integer)):
            return _Symbol([self._heads[int(key)]])
        if isinstance(key, str):
            return _Symbol(Symbol.__getitem__(self, key)._heads)
        parts, arrays = _split_key_symbolic(key)
        from ...operator.numpy.indexing import encode_key

        return SYM.op("_npi_index", [self, *arrays], key=encode_key(parts), num_args=1 + len(arrays))

    def _bin(self, o, name, reverse=False):
        if not isinstance(o, (Symbol, numbers.Number, _np.generic)):
            return NotImplemented
        fn = _F[name]
        return fn(o, self) if reverse else fn(self, o)

    def __neg__(self):
        return _F["negative"](self)

    def __abs__(self):
        return _F["absolute"](self)

    __hash__ = object.__hash__


    @property
    def T(self) -> _Symbol:
        return _F["transpose"](self)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> _Symbol:  # noqa: ARG002
        return SYM.op("_npi_copy", [self], dtype=_np.dtype(dtype).name)

    def reshape(self, *shape, order="C", **kwargs) -> _Symbol:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("newshape", kwargs.pop("shape", shape))
        return _F["reshape"](self, shape, order=order)


# a + b, a < b, ... as the NumPy functions (no reflected matmul: a Symbol never meets a foreign left operand there)
_dunders.install(_Symbol, {**_dunders.ARITHMETIC, **_dunders.COMPARISONS, "eq": "equal", "ne": "not_equal"},
                 {k: v for k, v in _dunders.ARITHMETIC.items() if k != "matmul"})


def _fluent(name):
    def method(self, *args, **kwargs):
        return _F[name](self, *args, **kwargs)
    method.__name__ = name
    return method


for _m in ("sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all", "cumsum",
           "transpose", "flatten", "squeeze", "repeat", "tile", "clip", "dot", "round", "swapaxes", "take",
           "sort", "argsort", "diagonal", "ravel", "flip", "trace", "split", "broadcast_to"):
    setattr(_Symbol, _m, _fluent(_m))
