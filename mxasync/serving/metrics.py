"""Prometheus metrics of a :class:`~mxasync.serving.ModelServer`, in a registry of its own.

Each server keeps its own ``CollectorRegistry`` (never ``prometheus_client``'s process-wide one),
so several servers in one process, or in one test run, do not mix their counts.

| metric | type | labels |
|---|---|---|
| ``mxasync_serve_request_latency_seconds`` | histogram | ``model`` (answered requests, from body read to response) |
| ``mxasync_serve_requests_total`` | counter | ``model``, ``code`` (every prediction request, by HTTP status) |
| ``mxasync_serve_errors_total`` | counter | ``model``, ``code`` (the requests answered with an error) |
| ``mxasync_serve_queue_depth`` | gauge | ``model`` (requests waiting for a batch) |
| ``mxasync_serve_batches_in_flight`` | gauge | ``model`` |
| ``mxasync_serve_batch_size`` | histogram | ``model`` (requests per batch) |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily

from .predictor import Predictor

__all__ = ["ServerMetrics", "CONTENT_TYPE_LATEST"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: the model label of requests naming no registered model (unbounded names must not become series)
UNKNOWN_MODEL = "_unknown"


class _PredictorCollector:
    """Reads queue depths and batch sizes from the predictors when scraped (nothing to keep in step)."""

    def __init__(self, predictors: Callable[[], Mapping[str, Predictor]]):
        self._predictors = predictors

    def collect(self):
        depth = GaugeMetricFamily("mxasync_serve_queue_depth", "Requests waiting for a batch", labels=["model"])
        flight = GaugeMetricFamily("mxasync_serve_batches_in_flight", "Batches computing", labels=["model"])
        sizes = HistogramMetricFamily("mxasync_serve_batch_size", "Requests per batch", labels=["model"])
        for name, p in sorted(self._predictors().items()):
            depth.add_metric([name], p.queue_depth)
            flight.add_metric([name], p.batches_in_flight)
            counts = p.stats.batch_sizes
            buckets = [(str(b), sum(c for n, c in counts.items() if n <= b)) for b in _BATCH_BUCKETS]
            buckets.append(("+Inf", sum(counts.values())))
            sizes.add_metric([name], buckets, sum_value=sum(n * c for n, c in counts.items()))
        yield from (depth, flight, sizes)


class ServerMetrics:
    """The server's metrics; ``render()`` is the body of ``GET /metrics``."""

    def __init__(self, predictors: Callable[[], Mapping[str, Predictor]]):
        self.registry = CollectorRegistry(auto_describe=False)
        self.latency = Histogram("mxasync_serve_request_latency_seconds", "Latency of answered prediction requests",
                                 ["model"], registry=self.registry, buckets=_LATENCY_BUCKETS)
        self.requests = Counter("mxasync_serve_requests", "Prediction requests by status", ["model", "code"],
                                registry=self.registry)
        self.errors = Counter("mxasync_serve_errors", "Prediction requests answered with an error",
                              ["model", "code"], registry=self.registry)
        self.registry.register(_PredictorCollector(predictors))

    def observe(self, model: str, code: int, seconds: float | None) -> None:
        self.requests.labels(model, str(code)).inc()
        if code >= 400:
            self.errors.labels(model, str(code)).inc()
        elif seconds is not None:
            self.latency.labels(model).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
