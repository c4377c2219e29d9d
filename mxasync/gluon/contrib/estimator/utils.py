"""Checks shared by the Estimator and its event handlers."""

from __future__ import annotations

from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss

__all__: list[str] = []


def _check_metrics(metrics) -> list:
    """``metrics`` (a metric, a composite, a list or None) as a flat list of metrics."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError(f"metrics must be a Metric or a list of Metric, refer to mxnet.metric.EvalMetric: {metrics}")
    return metrics


def _check_handler_metric_ref(handler, known_metrics) -> None:
    """A handler's metric attributes must be the Estimator's own metric objects."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics) -> None:
    if metric not in known_metrics:
        raise ValueError(f"Event handler {type(handler).__name__} refers to a metric instance {metric} outside of the "
                         "known training and validation metrics. Please use the metrics from estimator.train_metrics "
                         "and estimator.val_metrics instead.")


def _suggest_metric_for_loss(loss):
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None
