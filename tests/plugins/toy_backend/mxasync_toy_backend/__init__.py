"""A toy third-party backend: serves ``cpu_shared`` with a counting wrapper around numpy.

Decision: it serves the ``cpu_shared`` device type (host memory shared between
processes in MXNet), which no built-in backend claims, so its ops demonstrably
run through its own array namespace.  It overrides ``relu`` (to prove the
override table) and counts every namespace call (to prove generic ops run
through ``xp``).
"""

from __future__ import annotations

import numpy

from mxasync.backends import Backend

__all__ = ["ToyBackend", "CountingNumpy"]


class CountingNumpy:
    """numpy, with a count of the attribute lookups made through it."""

    def __init__(self):
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1
        return getattr(numpy, name)


def _toy_relu(xp, params, x):
    xp.calls["toy_relu"] = xp.calls.get("toy_relu", 0) + 1
    return numpy.where(x > 0, x, 0).astype(x.dtype)


class ToyBackend(Backend):
    name = "toy"
    device_type = "cpu_shared"
    priority = 10

    def __init__(self):
        super().__init__()
        self.overrides["relu"] = _toy_relu

    def start(self) -> None:
        self.xp = CountingNumpy()
