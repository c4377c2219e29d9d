"""``mx.sym.npx``: the ``mx.npx`` operators building graph nodes."""

from __future__ import annotations

from types import SimpleNamespace

from ..numpy._frontend import bind as _bind
from ..numpy_extension._api import FUNCS as _FUNCS
from ..numpy_extension._api_random import FUNCS as _RANDOM
from . import image  # mx.sym.npx.image: the image ops as graph nodes (F.npx.image in a hybridized block)
from .numpy._symbol import SYM as _SYM

__all__ = [*_FUNCS, "image"]
globals().update(_bind(_SYM, _FUNCS))
random = SimpleNamespace(**_bind(_SYM, _RANDOM))
