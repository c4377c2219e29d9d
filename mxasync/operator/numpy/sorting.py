"""NumPy-interface sorting and index arithmetic: ``sort``, ``argsort``, ``unravel_index``, ``diag_indices_from``.

>>> from mxasync.operator import get_op
>>> get_op("_npi_unravel_index").prepare(shape=(2, 3)).infer_shape([(4,)])[1]
[(2, 4)]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ._npop import npop

__all__: list[str] = []


def _none(xp, p, og, ins, outs):
    return [None] * len(ins)


def _sort(xp, p, a):
    if a.ndim == 0:
        return a.reshape(1).copy()  # MXNet: a 0-d input sorts to shape (1,), as NumPy's argsort
    r = xp.sort(a, axis=p.axis)
    return xp.flip(r, p.axis) if p.descending else r


def _sort_grad(xp, p, og, ins, outs):
    a = ins[0]
    if a.ndim == 0:
        return [og[0].reshape(())]
    axis = -1 if p.axis is None else p.axis
    src = a.reshape(-1) if p.axis is None else a
    idx = xp.argsort(src, axis=axis, kind="stable")
    if p.descending:
        idx = xp.flip(idx, axis)
    g = xp.zeros(src.shape, og[0].dtype)
    xp.put_along_axis(g, idx, og[0].reshape(idx.shape), axis=axis)
    return [g.reshape(a.shape)]


npop("_npi_sort", _sort, params={"axis": (Optional[int], -1), "descending": (bool, False)}, grad=_sort_grad,
     deps="og,in", doc="NumPy's ``sort``.")
npop("_npi_argsort", lambda xp, p, a: (xp.argsort(a, axis=p.axis, kind="stable") if a.ndim else
                                       xp.zeros((1,), np.int64)).astype(np.int64),
     params={"axis": (Optional[int], -1)}, grad=_none, doc="NumPy's ``argsort`` (stable; int64).")


def _unravel(xp, p, idx):
    return xp.stack(xp.unravel_index(idx.astype(np.int64), p.shape)).astype(idx.dtype if idx.dtype.kind in "iu"
                                                                              else np.int64)


npop("_npi_unravel_index", _unravel, params={"shape": (tuple[int, ...], ())}, grad=_none,
     doc="NumPy's ``unravel_index`` (the coordinates stacked on a first axis).")


def _diag_indices_from(xp, p, a):
    n = a.shape[0]
    return xp.broadcast_to(xp.arange(n, dtype=np.int64), (a.ndim, n)).copy()


npop("_npi_diag_indices_from", _diag_indices_from, grad=lambda xp, p, og, ins, outs: [None],
     doc="The indices of the main diagonal of ``a``, one row per axis.")
