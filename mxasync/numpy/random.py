"""``mx.np.random``: samplers of the context's seeded generator (``npx.seed`` / ``mx.random.seed``).

>>> from mxasync import np, npx
>>> npx.seed(0)
>>> np.random.uniform(size=(2, 3)).shape
(2, 3)
"""

from __future__ import annotations

from ._api_random import FUNCS as _FUNCS
from ._frontend import bind as _bind
from .multiarray import F as _F

__all__ = list(_FUNCS)
globals().update(_bind(_F, _FUNCS))
