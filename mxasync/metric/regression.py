"""Regression metrics (MAE, MSE, RMSE) and Loss, the mean of a net's own loss output."""

from __future__ import annotations

import numpy as _numpy

from ..ndarray import NDArray
from .base import EvalMetric, _host, check_label_shapes, register

__all__ = ["MAE", "MSE", "RMSE", "Loss"]


class _Regression(EvalMetric):
    """Per-batch regression error, averaged over updates (MXNet counts each array once)."""

    default_name = ""

    def __init__(self, name: str | None = None, output_names=None, label_names=None) -> None:
        super().__init__(name or self.default_name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            label, pred = _host(label), _host(pred)
            label = label.reshape(-1, 1) if label.ndim == 1 else label
            pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
            self._add(float(self.error(label, pred)), 1)

    @staticmethod
    def error(label, pred) -> float:
        raise NotImplementedError


@register
class MAE(_Regression):
    """Mean absolute error."""

    default_name = "mae"

    @staticmethod
    def error(label, pred) -> float:
        return _numpy.abs(label - pred).mean()


@register
class MSE(_Regression):
    """Mean squared error."""

    default_name = "mse"

    @staticmethod
    def error(label, pred) -> float:
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (per update, then averaged)."""

    default_name = "rmse"

    @staticmethod
    def error(label, pred) -> float:
        return _numpy.sqrt(((label - pred) ** 2.0).mean())


@register
class Loss(EvalMetric):
    """Mean of the outputs themselves (for nets whose output is a loss)."""

    def __init__(self, name: str = "loss", output_names=None, label_names=None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, _, preds) -> None:
        for pred in [preds] if isinstance(preds, NDArray) else preds:
            p = _host(pred)
            self._add(float(p.sum()), p.size)
