"""The op table's row type and input generators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def uniform(lo=-1.0, hi=1.0):
    def gen(rng, shape, dtype):
        return rng.uniform(lo, hi, size=shape).astype(dtype)

    return gen


def away(lo=-1.0, hi=1.0, gap=0.1):
    """Uniform values kept ``gap`` away from 0 (kinks: abs, relu, sign)."""

    def gen(rng, shape, dtype):
        x = rng.uniform(lo, hi, size=shape)
        x = np.where(np.abs(x) < gap, np.sign(x + 1e-12) * gap + x, x)
        return x.astype(dtype)

    return gen


def distinct(lo=-1.0, hi=1.0):
    """Values with no ties (max/min/argmax gradients)."""

    def gen(rng, shape, dtype):
        n = int(np.prod(shape))
        u = (rng.permutation(n) + rng.uniform(0.1, 0.9)) / max(n, 1)  # the jitter keeps two inputs apart
        return (u * (hi - lo) + lo).reshape(shape).astype(dtype)

    return gen


def integers(lo, hi):
    def gen(rng, shape, dtype):
        return rng.integers(lo, hi, size=shape).astype(dtype)

    return gen


@dataclass
class Case:
    op: str
    shapes: list  # each item: the input shapes of one parametrisation
    ref: Callable | None = None  # numpy reference: ref(*inputs, **params) -> array | tuple
    params: dict = field(default_factory=dict)
    gens: Any = None  # one generator for all inputs, or a list per input
    dtypes: tuple = ("float32", "float64")
    grad: Any = True  # True: numeric check; "zero": backward writes zeros; False: skip
    wrt: tuple | None = None  # inputs to check the gradient of (default: all)
    aux: Callable | None = None  # aux(rng, in_shapes, dtype) -> list of aux arrays
    is_train: bool = False
    inplace: bool = True  # try in-place forward when the op offers it
    check: Callable | None = None  # custom check(outs, inputs, params) instead of ref
    name: str = ""
    np_shape: bool = False  # NumPy shapes: a scalar result is 0-d (the NumPy-interface ops)

    @property
    def id(self) -> str:
        return self.name or self.op

    def inputs(self, rng, shapes, dtype):
        gens = self.gens if isinstance(self.gens, (list, tuple)) else [self.gens] * len(shapes)
        return [(g or uniform())(rng, s, dtype) for g, s in zip(gens, shapes, strict=False)]
