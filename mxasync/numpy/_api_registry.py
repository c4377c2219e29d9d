"""Every ``mx.np`` function (``fn(F, ...)``), and ``ND``: them bound to the imperative frontend."""

from __future__ import annotations

import types

from . import _api_math, _api_shape, _api_sorting
from ._frontend import bind
from .multiarray import F

FUNCS: dict = {**_api_math.FUNCS, **_api_shape.FUNCS, **_api_sorting.FUNCS}
ND = types.SimpleNamespace(**bind(F, FUNCS))
