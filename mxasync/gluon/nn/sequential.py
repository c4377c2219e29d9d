"""Containers: ``Sequential``/``HybridSequential`` chain their children; ``Lambda``/``HybridLambda`` wrap a function.

>>> import mxasync as mx
>>> net = mx.gluon.nn.HybridSequential()
>>> net.add(mx.gluon.nn.HybridLambda('relu'), mx.gluon.nn.HybridLambda(lambda F, x: x * 2))
>>> net(mx.nd.array([-1.0, 3.0])).asnumpy().tolist()
[0.0, 6.0]
"""

from __future__ import annotations

import warnings

from ... import ndarray as nd
from ... import symbol as _sym
from ..block import Block, HybridBlock, _indent

__all__ = ["Sequential", "HybridSequential", "Lambda", "HybridLambda"]


def _chain(children, x, args):
    for block in children:
        x = block(x, *args)
        args = []
        if isinstance(x, (tuple, list)):
            args = x[1:]
            x = x[0]
    if args:
        x = tuple([x, *args])
    return x


class _Stack:
    """What Sequential and HybridSequential share (before Block or HybridBlock in their bases): the list
    of children, ``add``, indexing (a slice is a new container of the same type), ``len`` and the repr."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._layers = []

    def add(self, *blocks) -> None:
        """Append blocks at the end."""
        for block in blocks:
            self._layers.append(block)
            self.register_child(block)

    def __repr__(self) -> str:
        body = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self._children.items())
        return f"{self.__class__.__name__}(\n{body}\n)"

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if not isinstance(layers, list):
            return layers
        net = type(self)(prefix=self._prefix)
        with net.name_scope():
            net.add(*layers)
        return net

    def __len__(self) -> int:
        return len(self._children)


class Sequential(_Stack, Block):
    """Stacks Blocks: the output of each is the input of the next."""

    def forward(self, x, *args):
        return _chain(self._children.values(), x, args)

    def hybridize(self, active=True, **kwargs) -> None:
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. Consider using "
                          "HybridSequential for the best performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Stack, HybridBlock):
    """Stacks HybridBlocks; hybridized, the whole stack is one cached graph."""

    def hybrid_forward(self, F, x, *args):
        return _chain(self._children.values(), x, args)


class Lambda(Block):
    """Wraps a function (or the name of an ``mx.nd`` function) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise AssertionError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, *args)`` (or the name of a function both ``mx.nd`` and ``mx.sym`` have)."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not (hasattr(nd, function) and hasattr(_sym, function)):
                raise AssertionError(f"Function name {function} is not found in symbol/ndarray.")
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"
