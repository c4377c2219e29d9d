"""The per-call cost of a tiny op: ``c = a + b`` on 10-element float32 arrays, ``per_step`` calls a step
(the registry's figure) and one wait at the end (the frameworks may overlap the calls).  NumPy's own ``a + b`` on the same arrays is
recorded as a reference (``numpy_us_per_call``)."""

from __future__ import annotations

import time

import numpy as np

from .common import Bench


def _numpy_us_per_call(calls: int) -> float:
    a, b = np.ones(10, np.float32), np.ones(10, np.float32)
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(calls * 10):
            a + b
        best = min(best, (time.process_time() - t0) / (calls * 10) * 1e6)
    return round(best, 3)


def build_mx(mx, name: str, cfg: dict) -> Bench:
    calls = cfg["per_step"]
    a, b = mx.nd.ones(10), mx.nd.ones(10)

    def step():
        for _ in range(calls):
            c = a + b
        c.wait_to_read()

    return Bench(step, {"numpy_us_per_call": _numpy_us_per_call(calls)})


def build_torch(torch, name: str, cfg: dict) -> Bench:
    calls = cfg["per_step"]
    a, b = torch.ones(10), torch.ones(10)

    def step():
        for _ in range(calls):
            a + b

    return Bench(step, {"numpy_us_per_call": _numpy_us_per_call(calls)})
