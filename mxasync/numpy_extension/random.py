"""``mx.npx.random``: MXNet's extra samplers for the NumPy interface, and ``seed``.

>>> from mxasync import npx
>>> npx.random.seed(seed=1)
>>> npx.random.bernoulli(prob=1.0, size=(2,)).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from ..numpy._frontend import bind as _bind
from ..numpy.multiarray import F as _F
from ..runtime.resource import seed as _seed
from ._api_random import FUNCS as _FUNCS

__all__ = ["seed", *_FUNCS]
globals().update(_bind(_F, _FUNCS))


def seed(seed, ctx="all") -> None:  # noqa: A002 - MXNet's keyword
    """Seed the engine's generators (``mx.random.seed``), ordered with the ops that sample."""
    _seed(seed, ctx)
