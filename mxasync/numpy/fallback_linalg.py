"""``mx.np.linalg.fallback_linalg``: the ``mx.np.linalg`` functions MXNet 1.9.1 runs with official NumPy.

See :mod:`mxasync.numpy.fallback`; ``mx.np.linalg`` takes the ones it has no op for.

>>> from mxasync import np
>>> round(float(np.linalg.cond(np.array([[2.0, 0.0], [0.0, 1.0]]))), 6)
2.0
"""

from __future__ import annotations

from .fallback import LINALG_NAMES, linalg_functions

__all__ = list(LINALG_NAMES)
globals().update(linalg_functions())
