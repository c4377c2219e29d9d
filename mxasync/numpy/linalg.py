"""``mx.np.linalg``: NumPy's linear algebra as ops of the registry (``_npi_linalg_*``).

>>> from mxasync import np
>>> np.linalg.det(np.array([[2.0, 0.0], [0.0, 3.0]]))
array(6.)
"""

from __future__ import annotations

from ._api_linalg import FUNCS as _FUNCS
from ._frontend import bind as _bind
from .multiarray import F as _F

__all__ = list(_FUNCS)
globals().update(_bind(_F, _FUNCS))
