"""``khatri_rao``: the column-wise Kronecker product (MXNet's src/operator/contrib/krprod.cc).

>>> import mxasync as mx
>>> mx.nd.khatri_rao(mx.nd.array([[1, -1], [2, -3]]), mx.nd.array([[1, 4], [2, 5], [3, 6]])).shape
(6, 2)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["KhatriRaoParam"]


class KhatriRaoParam(OpParam):
    num_args: int = Field(ge=1)


class _KhatriRaoProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        if any(s is None for s in in_shapes):
            return list(in_shapes), [None], []
        cols = {s[1] if len(s) == 2 else None for s in in_shapes}
        if len(cols) != 1 or None in cols:
            raise self.error(f"every input must be a matrix with the same number of columns; got shapes "
                             f"{[tuple(s) for s in in_shapes]}")
        rows = 1
        for s in in_shapes:
            rows *= s[0]
        return list(in_shapes), [(rows, cols.pop())], []


def _khatri_rao(xp, p, *mats):
    out = mats[0]
    for m in mats[1:]:  # row (i, j) of the product is mats_so_far[i] * m[j]
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return out


def _khatri_rao_bwd(xp, p, og, ins, outs):
    g = og[0].reshape(tuple(m.shape[0] for m in ins) + (og[0].shape[1],))
    grads = []
    for i in range(len(ins)):
        term = g
        for j, m in enumerate(ins):
            if j != i:  # multiply by every other factor along its own row axis
                shape = [1] * len(ins) + [m.shape[1]]
                shape[j] = m.shape[0]
                term = term * m.reshape(shape)
        axes = tuple(j for j in range(len(ins)) if j != i)
        grads.append(term.sum(axis=axes) if axes else term)
    return grads


defop("khatri_rao", param=KhatriRaoParam, base=_KhatriRaoProperty, var_args="num_args", deps="og,in",
      args=lambda p: [f"arg{i}" for i in range(p.num_args)], fwd=_khatri_rao, bwd=_khatri_rao_bwd,
      doc="The column-wise Kronecker (Khatri-Rao) product of matrices with the same number of columns: "
          "(prod of rows, columns); the first matrix varies slowest.")
