"""User metrics: CustomMetric over a function of numpy arrays, and ``mx.metric.np``."""

from __future__ import annotations

from collections.abc import Callable

from .base import EvalMetric, _host, check_label_shapes, register

__all__ = ["CustomMetric", "np"]


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred) -> value`` or ``-> (sum, count)`` on numpy arrays."""

    def __init__(self, feval: Callable, name: str | None = None, allow_extra_outputs: bool = False,
                 output_names=None, label_names=None) -> None:
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds) -> None:
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=False):
            reval = self._feval(_host(label), _host(pred))
            value, count = reval if isinstance(reval, tuple) else (reval, 1)
            self._add(value, count)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval: Callable, name: str | None = None, allow_extra_outputs: bool = False) -> CustomMetric:
    """A CustomMetric from a function of numpy arrays (``mx.metric.np``)."""

    def feval(label, pred):
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
