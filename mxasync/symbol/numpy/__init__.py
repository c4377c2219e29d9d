"""``mx.sym.np``: the ``mx.np`` functions building graph nodes (what a hybridized block's ``F.np`` is).

>>> import mxasync as mx
>>> x = mx.sym.var("x").as_np_ndarray()
>>> mx.sym.np.add(x, 1).list_arguments()
['x']
"""

from __future__ import annotations

from types import SimpleNamespace

from ...numpy._api_linalg import FUNCS as _LINALG
from ...numpy._api_random import FUNCS as _RANDOM
from ...numpy._frontend import bind as _bind
from ._symbol import _F, SYM, _Symbol

__all__ = ["_Symbol", *_F]

globals().update(_F)
linalg = SimpleNamespace(**_bind(SYM, _LINALG))
random = SimpleNamespace(**_bind(SYM, _RANDOM))
ndarray = _Symbol
