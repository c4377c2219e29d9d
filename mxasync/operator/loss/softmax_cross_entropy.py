"""``softmax_cross_entropy``: the summed cross entropy of softmax(data) against integer labels
(MXNet's loss_binary_op.cc).

``data`` is (N, K), ``label`` (N,) holds class indices; the output, of shape (1,), is
``-sum_i log softmax(data)[i, label[i]]``. The gradient to ``data`` is
``(softmax(data) - one_hot(label)) * out_grad``; asking for one to ``label`` is an error, as in MXNet.

>>> import mxasync as mx
>>> mx.nd.softmax_cross_entropy(mx.nd.zeros((2, 4)), mx.nd.array([0, 3])).asnumpy().round(4)
array([2.7726], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ..functional import FunctionalProperty, defop

__all__: list[str] = []


class _SoftmaxCEProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, label = in_shapes
        if d is not None and len(d) != 2:
            raise self.error(f"data has shape {tuple(d)}; it must be 2-D (batch, classes)")
        if label is not None and len(label) != 1:
            raise self.error(f"label has shape {tuple(label)}; it must be 1-D (one class index per row)")
        if d is not None and label is not None and label[0] != d[0]:
            raise self.error(f"label has shape {tuple(label)} but data {tuple(d)} needs ({d[0]},)")
        return [d, (d[0],) if d is not None else label], [(1,)], []


def _shifted(xp, data, label):
    """``data - max`` per row, ``log(sum(exp(.)))`` per row, and the rows and label columns, computed in
    data's floating type (as MXNet does: a float64 copy of the whole batch costs twice the time)."""
    z = data - data.max(axis=1, keepdims=True)
    lse = xp.log(xp.exp(z).sum(axis=1))
    return z, lse, xp.arange(data.shape[0]), label.astype(np.int64)


def _fwd(xp, p, data, label):
    z, lse, rows, cols = _shifted(xp, data, label)
    return (lse - z[rows, cols]).sum(dtype=np.float64).reshape(1).astype(data.dtype)


def _bwd(xp, p, og, ins, outs, need, into):
    data, label = ins
    if need[1]:
        raise ValueError("softmax_cross_entropy: cannot take the gradient with respect to label")
    z, lse, rows, cols = _shifted(xp, data, label)
    g = z - lse[:, None]
    xp.exp(g, out=g)
    g[rows, cols] -= 1.0
    g *= og[0].astype(g.dtype)
    return [g.astype(data.dtype, copy=False), None]


defop("softmax_cross_entropy", base=_SoftmaxCEProperty, arguments=("data", "label"), fwd=_fwd, bwd=_bwd,
      bwd_into=True, deps="og,in",
      doc="The cross entropy of softmax(data) (N, K) against the class indices in label (N,), summed over "
          "the batch: an output of shape (1,).")
