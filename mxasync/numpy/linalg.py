"""``mx.np.linalg``: NumPy's linear algebra as ops of the registry (``_npi_linalg_*``), and the
functions MXNet runs with official NumPy (:mod:`.fallback_linalg`) where there is no op.

>>> from mxasync import np
>>> np.linalg.det(np.array([[2.0, 0.0], [0.0, 3.0]]))
array(6.)
"""

from __future__ import annotations

from . import fallback_linalg
from ._api_linalg import FUNCS as _FUNCS
from ._frontend import bind as _bind
from .multiarray import F as _F

_FALLBACKS = {n: getattr(fallback_linalg, n) for n in fallback_linalg.__all__ if n not in _FUNCS}
__all__ = [*_FUNCS, *_FALLBACKS]
globals().update(_bind(_F, _FUNCS))
globals().update(_FALLBACKS)
