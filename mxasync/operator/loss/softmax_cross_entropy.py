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


def _log_softmax(xp, data):
    x = data.astype(np.float64) if data.dtype != np.float64 else data
    x = x - x.max(axis=1, keepdims=True)
    return x - xp.log(xp.exp(x).sum(axis=1, keepdims=True))


def _rows(xp, label, n):
    return xp.arange(n), label.astype(np.int64)


def _fwd(xp, p, data, label):
    rows, cols = _rows(xp, label, data.shape[0])
    return (-_log_softmax(xp, data)[rows, cols].sum()).reshape(1).astype(data.dtype)


def _bwd(xp, p, og, ins, outs, need, into):
    data, label = ins
    if need[1]:
        raise ValueError("softmax_cross_entropy: cannot take the gradient with respect to label")
    g = xp.exp(_log_softmax(xp, data))
    rows, cols = _rows(xp, label, data.shape[0])
    g[rows, cols] -= 1.0
    return [(g * og[0].astype(g.dtype)).astype(data.dtype), None]


defop("softmax_cross_entropy", base=_SoftmaxCEProperty, arguments=("data", "label"), fwd=_fwd, bwd=_bwd,
      bwd_into=True, deps="og,in",
      doc="The cross entropy of softmax(data) (N, K) against the class indices in label (N,), summed over "
          "the batch: an output of shape (1,).")
