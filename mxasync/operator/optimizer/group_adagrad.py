"""``_contrib_group_adagrad_update`` (``mx.nd.contrib.group_adagrad_update``): AdaGrad with one history value per row.

MXNet's update (``src/operator/contrib/optimizer_op-inl.h``), per row ``r`` of the weight::

    g = clip(rescale_grad * grad[r], clip_gradient)
    history[r] += mean(g ** 2)
    weight[r] -= lr * g / sqrt(history[r] + epsilon)

With a row_sparse gradient only its rows move (the lazy update); a dense gradient moves every row
whose gradient is not all zero the same way (MXNet 1.9.1 has no dense kernel and refuses dense
inputs; ours is the formula of its ``GroupAdaGrad`` optimizer's dense path).  The weight may be
dense or row_sparse; ``history`` (shape ``(rows, 1)``) is dense and updated in place (MXNet also
takes a row_sparse history next to a row_sparse weight; mxasync keeps optimizer states dense).

>>> import numpy as np
>>> from mxasync.operator.optimizer.group_adagrad import _dense, GroupAdagradParam
>>> w, h = np.zeros((2, 2)), np.zeros((2, 1))
>>> _dense(np, GroupAdagradParam(lr=1.0, epsilon=0.0), w, np.array([[3.0, 4.0], [0.0, 0.0]]), h).tolist(), h.ravel()
([[-0.848528137423857, -1.131370849898476], [0.0, 0.0]], array([12.5,  0. ]))
"""

from __future__ import annotations

from typing import ClassVar

from ..functional import defop
from ..params import OpParam
from ..sparse import formats as st
from ..sparse.formats import DEFAULT, RSP, register_sparse
from ..sparse.kernels import densify, stype_of
from .updates import _grad, _UpdateProperty

__all__: list[str] = []


class GroupAdagradParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "rescale_grad", "clip_gradient", "epsilon")  # MXNet's
    lr: float
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0
    epsilon: float = 1e-5


class _GroupAdagradProperty(_UpdateProperty):
    def infer_shape(self, in_shapes):
        w, g, h = (tuple(s) if s is not None else None for s in in_shapes)
        w = w or g
        if w is None:
            return [None, None, h], [None], []
        if len(w) < 2:
            raise self.error(f"weight must have at least 2 dimensions (rows, ...), got shape {w}")
        if g is not None and g != w:
            raise self.error(f"grad has shape {g} but weight has {w}")
        want = (w[0], 1)
        if h is not None and h != want:
            raise self.error(f"history has shape {h} but a weight of shape {w} needs {want} (one value per row)")
        return [w, w, want], [w], []


def _rows_step(xp, p, w_rows, g_rows, h_rows):
    """The update of the rows given (``h_rows`` of shape (n, 1) is updated in place); returns the new rows."""
    g = _grad(xp, p, g_rows)
    n = g.shape[0]
    g2 = g.reshape(n, -1)
    h_rows += (g2 * g2).mean(axis=1, keepdims=True).astype(h_rows.dtype)
    step = (p.lr * g2 / xp.sqrt(h_rows + p.epsilon)).reshape(g.shape)
    return (w_rows - step).astype(w_rows.dtype)


def _dense(xp, p, w, g, history):
    rows = xp.nonzero(xp.any(g.reshape(g.shape[0], -1) != 0, axis=1))[0]
    out = w.copy()
    if rows.shape[0]:
        h = history[rows]
        out[rows] = _rows_step(xp, p, w[rows], g[rows], h)
        history[rows] = h
    return out


defop("_contrib_group_adagrad_update", param=GroupAdagradParam, base=_GroupAdagradProperty,
      arguments=("weight", "grad", "history"), mutates=(2,), fwd=_dense,
      doc="Group AdaGrad (one learning-rate scale per row): ``history += mean(g^2, axis=1)``; "
          "``weight -= lr * g / sqrt(history + epsilon)`` with ``g = clip(rescale_grad * grad)``; "
          "``history`` is updated in place, only the gradient's rows move (lazy for row_sparse).")


def _infer(prop, in_stypes):
    w, g, h = in_stypes
    if h != DEFAULT:  # a dense copy of the history would take the update and be dropped
        raise prop.error(f"history must be dense (mxasync keeps optimizer states dense), got {h}")
    return None if w == g == DEFAULT else [w]


def _sparse(xp, prop, op_ctx, ins, out_stypes):
    """A row_sparse gradient (or weight): only the gradient's stored rows are read and written."""
    w, g, history = ins
    wd = densify(xp, w) if stype_of(w) != DEFAULT else w.copy()
    if stype_of(g) != RSP:
        return [st.cast_value(xp, _dense(xp, prop.params, wd, densify(xp, g), history), out_stypes[0])]
    rows = g.indices
    if rows.shape[0]:
        h = history[rows]
        wd[rows] = _rows_step(xp, prop.params, wd[rows], g.data, h)
        history[rows] = h
    return [st.cast_value(xp, wd, out_stypes[0])]


register_sparse("_contrib_group_adagrad_update", infer=_infer, forward=_sparse)
