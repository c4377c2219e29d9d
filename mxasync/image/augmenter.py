"""The ``Augmenter`` protocol and the augmenters that hold others: ``SequentialAug``, ``RandomOrderAug``;
plus ``CastAug``.

An augmenter is called on one HxWxC NDArray and returns one. ``dumps()`` gives
MXNet's JSON description, ``[class name in lower case, {constructor
arguments}]``; the containers return a list holding their members' dumps.

>>> import mxasync as mx
>>> aug = SequentialAug([CastAug(), CastAug("float16")])
>>> aug.dumps()
['sequentialaug', ['["castaug", {"type": "float32"}]', '["castaug", {"type": "float16"}]']]
>>> aug(mx.nd.zeros((2, 2, 3), dtype="uint8")).dtype.__name__
'float16'
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import numpy as np

from ..ndarray import NDArray
from ._arrays import as_nd

__all__ = ["Augmenter", "SequentialAug", "RandomOrderAug", "CastAug"]


class Augmenter:
    """Base class: subclasses pass their constructor arguments to ``__init__`` (for ``dumps``)
    and implement ``__call__(src) -> NDArray``."""

    def __init__(self, **kwargs) -> None:
        self._kwargs = {}
        for key, value in kwargs.items():
            if isinstance(value, NDArray):
                value = value.asnumpy()
            if isinstance(value, np.ndarray):
                value = value.tolist()
            self._kwargs[key] = value

    def dumps(self) -> str:
        """A JSON string ``[name, {arguments}]`` describing this augmenter."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src: NDArray) -> NDArray:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(src)")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


class _Container(Augmenter):
    """An augmenter made of the augmenters ``ts``; ``dumps`` lists theirs."""

    def __init__(self, ts: Sequence[Augmenter]) -> None:
        super().__init__()
        self.ts = list(ts)

    def dumps(self) -> list:  # type: ignore[override]
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def _apply(self, src: NDArray) -> NDArray:
        for aug in self.ts:
            src = aug(src)
        return src

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.ts!r})"


class SequentialAug(_Container):
    """Apply the augmenters ``ts`` one after the other."""

    def __call__(self, src: NDArray) -> NDArray:
        return self._apply(src)


class RandomOrderAug(_Container):
    """Apply the augmenters ``ts`` in a random order (``random.shuffle`` of ``ts`` on each call, as MXNet)."""

    def __call__(self, src: NDArray) -> NDArray:
        random.shuffle(self.ts)
        return self._apply(src)


class CastAug(Augmenter):
    """Cast to ``typ`` (float32 by default)."""

    def __init__(self, typ: str = "float32") -> None:
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src: NDArray) -> NDArray:
        return as_nd(src).astype(self.typ)
