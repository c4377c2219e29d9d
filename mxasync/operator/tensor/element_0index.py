"""MXNet's legacy row-wise element ops: choose_element_0index (``lhs[i, rhs[i]]``) and
fill_element_0index (``lhs`` with ``lhs[i, rhs[i]] = mhs[i]``).

Indices are floats holding integers, as MXNet passes them. choose clips an index into
``[0, k)``; fill skips an out-of-range index (both as MXNet 1.9.1 does).

>>> import numpy as np
>>> from mxasync.operator.tensor.element_0index import _choose, _fill
>>> a = np.array([[1.0, 2, 3], [4, 5, 6]])
>>> _choose(np, None, a, np.array([2.0, 0])), _fill(np, None, a, np.array([9.0, 8]), np.array([2.0, 7]))[0]
(array([3., 4.]), array([1., 2., 9.]))
"""

from __future__ import annotations

from ..functional import FunctionalProperty, defop

__all__: list[str] = []


class _RowsProperty(FunctionalProperty):
    """``lhs`` is (n, k); every other input is (n,)."""

    def infer_shape(self, in_shapes):
        lhs = in_shapes[0]
        n = lhs[0] if lhs is not None else next((s[0] for s in in_shapes[1:] if s is not None), None)
        if lhs is not None and len(lhs) != 2:
            raise self.error(f"lhs must be 2-D (rows, columns), got shape {tuple(lhs)}")
        for name, s in zip(self.list_arguments()[1:], in_shapes[1:], strict=True):
            if s is not None and n is not None and tuple(s) != (n,):
                raise self.error(f"{name} has shape {tuple(s)} but lhs has {n} rows: it needs ({n},)")
        ins = [lhs] + [(n,) if n is not None else None] * (len(in_shapes) - 1)
        out = ((n,) if self.op_name == "choose_element_0index" else lhs) if n is not None else None
        return ins, [out], []


def _rows(xp, lhs):
    return xp.arange(lhs.shape[0])


def _choose(xp, p, lhs, rhs):
    idx = xp.clip(rhs.astype("int64"), 0, lhs.shape[1] - 1)
    return lhs[_rows(xp, lhs), idx]


def _choose_bwd(xp, p, og, ins, outs):
    lhs, rhs = ins
    g = xp.zeros(lhs.shape, dtype=lhs.dtype)
    g[_rows(xp, lhs), xp.clip(rhs.astype("int64"), 0, lhs.shape[1] - 1)] = og[0]
    return [g, None]


def _valid(xp, lhs, rhs):
    idx = rhs.astype("int64")
    keep = (idx >= 0) & (idx < lhs.shape[1])
    return _rows(xp, lhs)[keep], idx[keep], keep


def _fill(xp, p, lhs, mhs, rhs):
    out = lhs.copy()
    rows, cols, keep = _valid(xp, lhs, rhs)
    out[rows, cols] = mhs[keep]
    return out


def _fill_bwd(xp, p, og, ins, outs):
    lhs, mhs, rhs = ins
    rows, cols, keep = _valid(xp, lhs, rhs)
    g_lhs = og[0].copy()
    g_lhs[rows, cols] = 0
    g_mhs = xp.zeros(mhs.shape, dtype=mhs.dtype)
    g_mhs[keep] = og[0][rows, cols]
    return [g_lhs, g_mhs, None]


defop("choose_element_0index", base=_RowsProperty, arguments=("lhs", "rhs"), fwd=_choose, bwd=_choose_bwd,
      deps="og,in", doc="``out[i] = lhs[i, rhs[i]]`` for a 2-D ``lhs`` (indices clipped into range).")
defop("fill_element_0index", base=_RowsProperty, arguments=("lhs", "mhs", "rhs"), fwd=_fill, bwd=_fill_bwd,
      deps="og,in", doc="``lhs`` with ``out[i, rhs[i]] = mhs[i]`` (out-of-range indices leave the row alone); "
                        "MXNet has no gradient for it, ours passes the gradient to lhs and mhs.")
