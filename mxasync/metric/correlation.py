"""Correlation metrics: MCC (binary Matthews correlation), PCC (its multiclass form from the
confusion matrix) and PearsonCorrelation (``pearsonr``), with MXNet 1.9's macro/micro averaging.

>>> import mxasync as mx
>>> m = mx.metric.create("pearsonr")
>>> m.update([mx.nd.array([[1, 0], [0, 1], [0, 1]])], [mx.nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
>>> round(m.get()[1], 6)
0.421637
"""

from __future__ import annotations

import math

import numpy as _numpy

from .base import EvalMetric, _host, alias, check_label_shapes, register
from .classification import _BinaryScore

__all__ = ["MCC", "PCC", "PearsonCorrelation"]


def _matthews(c) -> float:
    tp, fp, fn, tn = c
    terms = [tp + fp, tp + fn, tn + fp, tn + fn]
    denom = math.sqrt(math.prod(t if t else 1.0 for t in terms))  # zero terms count as 1 (MXNet)
    return (tp * tn - fp * fn) / denom


@register
class MCC(_BinaryScore):
    """Matthews correlation of a binary classifier (class 1 positive); ``average="macro"`` averages
    per-update scores, ``"micro"`` pools the confusion counts."""

    def __init__(self, name: str = "mcc", output_names=None, label_names=None, average: str = "macro") -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, average=average)

    def _score(self, counts) -> float:
        return _matthews(counts)


def _pcc(cm: _numpy.ndarray) -> float:
    """Multiclass Matthews correlation of a confusion matrix (rows: predictions, columns: labels)."""
    n = cm.sum()
    x, y = cm.sum(axis=1), cm.sum(axis=0)
    cov_xx, cov_yy = float(_numpy.sum(x * (n - x))), float(_numpy.sum(y * (n - y)))
    if cov_xx == 0 or cov_yy == 0:
        return float("nan")
    cov_xy = float(_numpy.sum(cm.diagonal() * n - x * y))
    return cov_xy / math.sqrt(cov_xx * cov_yy)


@register
class PCC(EvalMetric):
    """Pearson correlation of the confusion matrix (multiclass MCC); predictions are class scores
    (argmax taken) or class indices shaped like the labels."""

    def __init__(self, name: str = "pcc", output_names=None, label_names=None, has_global_stats: bool = True) -> None:
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=has_global_stats)

    def _grow(self, k: int) -> None:
        pad = k - self.k
        self.lcm = _numpy.pad(self.lcm, ((0, pad), (0, pad)))
        self.gcm = _numpy.pad(self.gcm, ((0, pad), (0, pad)))
        self.k = k

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            label, pred = _host(label).astype("int64"), _host(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int64")
            label, pred = label.ravel(), pred.ravel()
            top = int(max(pred.max(initial=0), label.max(initial=0)))
            if top >= self.k:
                self._grow(top + 1)
            batch = _numpy.zeros((self.k, self.k))
            _numpy.add.at(batch, (pred, label), 1)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:
        return _pcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value) -> None:  # the base class assigns it; the matrix is the state
        pass

    @property
    def global_sum_metric(self) -> float:
        return _pcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value) -> None:
        pass

    def reset(self) -> None:
        self.global_num_inst = 0
        self.gcm = _numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0
        self.lcm = _numpy.zeros((self.k, self.k))


class _Moments:
    """Running sums for a pooled Pearson coefficient."""

    def __init__(self) -> None:
        self.s = _numpy.zeros(6)  # n, sum p, sum l, sum p^2, sum l^2, sum p*l

    def add(self, p: _numpy.ndarray, lab: _numpy.ndarray) -> None:
        self.s += [p.size, p.sum(), lab.sum(), (p * p).sum(), (lab * lab).sum(), (p * lab).sum()]

    def corr(self) -> float:
        n, sp, sl, spp, sll, spl = self.s
        den = math.sqrt(max(n * spp - sp * sp, 0.0) * max(n * sll - sl * sl, 0.0))
        return (n * spl - sp * sl) / den if den else float("nan")


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson's r of predictions and labels; ``average="macro"`` averages per-array coefficients,
    ``"micro"`` pools every value seen."""

    def __init__(self, name: str = "pearsonr", output_names=None, label_names=None, average: str = "macro") -> None:
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def reset(self) -> None:
        super().reset()
        self._local, self._global = _Moments(), _Moments()

    def reset_local(self) -> None:
        super().reset_local()
        self._local = _Moments()

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            check_label_shapes(label, pred, False, True)
            lab, p = _host(label).ravel().astype("float64"), _host(pred).ravel().astype("float64")
            if self.average == "macro":
                self._add(float(_numpy.corrcoef(p, lab)[0, 1]), 1)
            else:
                self._local.add(p, lab)
                self._global.add(p, lab)
                self.num_inst += 1
                self.global_num_inst += 1

    def get(self):
        if self.average == "micro":
            return (self.name, self._local.corr() if self.num_inst else float("nan"))
        return super().get()

    def get_global(self):
        if self.average == "micro":
            return (self.name, self._global.corr() if self.global_num_inst else float("nan"))
        return super().get_global()
