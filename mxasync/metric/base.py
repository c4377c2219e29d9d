"""EvalMetric, the metric registry, ``create`` and CompositeEvalMetric (MXNet 1.9 semantics).

``update(labels, preds)`` takes lists of NDArrays (or numpy arrays); a metric
keeps local sums (``reset_local`` clears them, e.g. every Speedometer report)
and global sums (``reset`` clears both); ``get()`` gives ``(name, value)`` of
the local ones, ``get_global()`` of the global ones.

>>> import mxasync as mx
>>> from mxasync import metric
>>> acc = metric.create("acc")
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
"""

from __future__ import annotations

import json
from collections import OrderedDict

import numpy as _numpy

from ..ndarray import NDArray
from ..registry import ClassRegistry

__all__ = ["EvalMetric", "CompositeEvalMetric", "create", "register", "alias", "check_label_shapes"]

_REGISTRY = ClassRegistry("metric")
register = _REGISTRY.register
alias = _REGISTRY.alias


def check_label_shapes(labels, preds, wrap: bool = False, shape: bool = False):
    """Raise if the numbers (or, with ``shape``, the shapes) of labels and preds differ."""
    a, b = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if a != b:
        raise ValueError(f"Shape of labels {a} does not match shape of predictions {b}")
    if wrap:
        labels = [labels] if isinstance(labels, (NDArray, _numpy.ndarray)) else labels
        preds = [preds] if isinstance(preds, (NDArray, _numpy.ndarray)) else preds
    return labels, preds


def _host(x) -> _numpy.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else _numpy.asarray(x)


class EvalMetric:
    """Base class: ``sum_metric / num_inst`` locally and globally."""

    def __init__(self, name: str, output_names: list[str] | None = None, label_names: list[str] | None = None,
                 **kwargs) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict:
        config = self._kwargs.copy()
        config.update(metric=type(self).__name__, name=self.name, output_names=self.output_names,
                      label_names=self.label_names)
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update from name -> array dicts, picking ``output_names``/``label_names`` when set."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds) -> None:
        raise NotImplementedError()

    def _add(self, value: float, count: float) -> None:
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    @staticmethod
    def _pairs(name, value) -> list[tuple]:
        names = name if isinstance(name, list) else [name]
        values = value if isinstance(value, list) else [value]
        return list(zip(names, values, strict=False))

    def get_name_value(self) -> list[tuple]:
        return self._pairs(*self.get())

    def get_global_name_value(self) -> list[tuple]:
        return self._pairs(*self.get_global()) if self._has_global_stats else self.get_name_value()


def create(metric, *args, **kwargs) -> EvalMetric:
    """A metric from a name (``"acc"``, ``"ce"``...), an instance, a callable ``f(label, pred)``, a list,
    or a config: ``metric.get_config()`` (a dict) or its JSON string, as MXNet's ``create`` takes."""
    if isinstance(metric, str) and metric.lstrip().startswith(("{", "[")):
        if args or kwargs:
            raise ValueError("metric.create: a JSON config takes no further arguments")
        metric = json.loads(metric)
        if isinstance(metric, list) and len(metric) == 2 and isinstance(metric[0], str) \
                and isinstance(metric[1], dict):  # MXNet's ["name", {kwargs}] form
            return create(metric[0], **metric[1])
    if isinstance(metric, dict):
        config = dict(metric)
        if "metric" not in config:
            raise ValueError(f"metric.create: a config needs a 'metric' key, got {sorted(config)}")
        return create(config.pop("metric"), **config, **kwargs)
    if isinstance(metric, EvalMetric):
        return metric
    if callable(metric) and not isinstance(metric, type):
        from .custom import CustomMetric

        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    return _REGISTRY.find(metric)(*args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values."""

    def __init__(self, metrics=None, name: str = "composite", output_names=None, label_names=None) -> None:
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def add(self, metric) -> None:
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}") from None

    def update_dict(self, labels: dict, preds: dict) -> None:
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for m in self.metrics:
            m.update_dict(labels, preds)

    def update(self, labels, preds) -> None:
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self) -> None:
        for m in getattr(self, "metrics", ()):
            m.reset()

    def reset_local(self) -> None:
        for m in self.metrics:
            m.reset_local()

    def _collect(self, getter: str):
        names, values = [], []
        for m in self.metrics:
            name, value = getattr(m, getter)()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get(self):
        return self._collect("get")

    def get_global(self):
        return self._collect("get_global")

    def get_config(self) -> dict:
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config
