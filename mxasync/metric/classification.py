"""Classification metrics: Accuracy, TopKAccuracy, F1, Perplexity, CrossEntropy, NegativeLogLikelihood."""

from __future__ import annotations

import math

import numpy as _numpy

from .base import EvalMetric, _host, alias, check_label_shapes, register

__all__ = ["Accuracy", "TopKAccuracy", "F1", "Perplexity", "CrossEntropy", "NegativeLogLikelihood"]


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of correct predictions; predictions of another shape than the labels are argmax'ed on ``axis``."""

    def __init__(self, axis: int = 1, name: str = "accuracy", output_names=None, label_names=None) -> None:
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            label, pred = _host(label), _host(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=self.axis)
            pred, label = pred.astype("int32").ravel(), label.astype("int32").ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest scores (``top_k > 1``)."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", output_names=None, label_names=None) -> None:
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        if top_k <= 1:
            raise ValueError("Please use Accuracy if top_k is no more than 1")
        self.top_k = top_k
        self.name += f"_{top_k}"

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            pred, label = _host(pred).astype("float32"), _host(label).astype("int32")
            if pred.ndim > 2:
                raise ValueError("Predictions should be no more than 2 dims")
            check_label_shapes(label, pred)
            if pred.ndim == 1:
                correct = int((_numpy.argpartition(pred, -self.top_k) == label.ravel()).sum())
            else:
                k = min(pred.shape[1], self.top_k)
                top = _numpy.argpartition(pred, -k, axis=1)[:, -k:]
                correct = int((top == label.reshape(-1, 1)).any(axis=1).sum())
            self._add(correct, pred.shape[0])


class _BinaryStats:
    """Confusion counts of a binary classifier, local and global."""

    def __init__(self) -> None:
        self.local = _numpy.zeros(4)  # tp, fp, fn, tn
        self.glob = _numpy.zeros(4)

    def update(self, label, pred) -> None:
        pred, label = _host(pred), _host(label).astype("int32").ravel()
        check_label_shapes(label, pred)
        if len(_numpy.unique(label)) > 2:
            raise ValueError("F1 currently only supports binary classification.")
        p, t = pred.argmax(axis=1) == 1, label == 1
        counts = _numpy.array([(p & t).sum(), (p & ~t).sum(), (~p & t).sum(), (~p & ~t).sum()], dtype=float)
        self.local += counts
        self.glob += counts

    @staticmethod
    def fscore(c) -> float:
        tp, fp, fn, _ = c
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


class _BinaryScore(EvalMetric):
    """A score of a binary classifier's confusion counts (class 1 positive). ``average="macro"``
    averages per-update scores, ``"micro"`` pools the counts. Subclasses give :meth:`_score`."""

    def __init__(self, name: str, output_names=None, label_names=None, average: str = "macro") -> None:
        self.average = average
        self.metrics = _BinaryStats()
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def _score(self, counts) -> float:
        raise NotImplementedError

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            self.metrics.update(label, pred)
        s = self.metrics
        if self.average == "macro":
            self._add(self._score(s.local), 1)  # both count sets were cleared after the last update
            s.local[:] = 0
            s.glob[:] = 0
        else:
            self.sum_metric, self.num_inst = self._score(s.local) * s.local.sum(), s.local.sum()
            self.global_sum_metric, self.global_num_inst = self._score(s.glob) * s.glob.sum(), s.glob.sum()

    def reset(self) -> None:
        super().reset()
        self.metrics = _BinaryStats()

    def reset_local(self) -> None:
        super().reset_local()
        self.metrics.local[:] = 0


@register
class F1(_BinaryScore):
    """Binary F1 of class 1. ``average="macro"`` averages per-update scores, ``"micro"`` pools the counts."""

    def __init__(self, name: str = "f1", output_names=None, label_names=None, average: str = "macro") -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, average=average)

    def _score(self, counts) -> float:
        return self.metrics.fscore(counts)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels; ``ignore_label`` entries are skipped."""

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity", output_names=None,
                 label_names=None) -> None:
        super().__init__(name, ignore_label=ignore_label, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds) -> None:
        if len(labels) != len(preds):
            raise ValueError(f"Perplexity: {len(labels)} labels but {len(preds)} predictions")
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds, strict=True):
            label, pred = _host(label).ravel().astype("int64"), _host(pred)
            pred = _numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            if label.size != pred.shape[0]:
                raise ValueError(f"shape mismatch: {label.shape} vs. {pred.shape}")
            # out-of-range labels are clipped, as MXNet's pick (mode='clip') does
            prob = pred[_numpy.arange(label.size), _numpy.clip(label, 0, pred.shape[1] - 1)]
            if self.ignore_label is not None:
                keep = label != self.ignore_label
                prob, num = _numpy.where(keep, prob, 1.0), num - int((~keep).sum())
            loss -= float(_numpy.log(_numpy.maximum(1e-10, prob)).sum())
            num += prob.size
        self._add(loss, num)

    def get(self):
        return (self.name, math.exp(self.sum_metric / self.num_inst) if self.num_inst else float("nan"))

    def get_global(self):
        n = self.global_num_inst
        return (self.name, math.exp(self.global_sum_metric / n) if n else float("nan"))


@register
@alias("ce")
class CrossEntropy(EvalMetric):
    """Mean ``-log(p[label] + eps)`` over samples; predictions are probabilities of shape (N, C)."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", output_names=None, label_names=None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            label, pred = _host(label).ravel(), _host(pred)
            if label.shape[0] != pred.shape[0]:
                raise ValueError(f"{self.name}: {label.shape[0]} labels but {pred.shape[0]} predictions")
            prob = pred[_numpy.arange(label.shape[0]), label.astype(_numpy.int64)]
            self._add(float((-_numpy.log(prob + self.eps)).sum()), label.shape[0])


@register
@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """The same sum as CrossEntropy under MXNet's other name."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names=None, label_names=None) -> None:
        super().__init__(eps, name, output_names, label_names)
