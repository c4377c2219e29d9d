"""``_sample_unique_zipfian``: per row of ``shape = (batch, num_sampled)``, distinct classes in
``[0, range_max)`` drawn from the log-uniform distribution
``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)`` without replacement, and the number of
draws each row needed (candidate sampling for large softmaxes).

>>> import mxasync as mx
>>> samples, tries = mx.nd._internal._sample_unique_zipfian(50, shape=(2, 10))
>>> samples.shape, tries.shape, len(set(samples.asnumpy()[0].tolist()))
((2, 10), (2,), 10)
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..params import OpParam, Shape
from .samplers import _rng

__all__: list[str] = []


class UniqueZipfianParam(OpParam):
    range_max: int = Field(description="the number of classes: samples lie in [0, range_max)")
    shape: Shape = Field((), description="(batch_size, num_sampled): the output shape")


class _UniqueZipfianProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        shape = tuple(self.params.shape)
        if len(shape) != 2:
            raise self.error(f"shape must be (batch_size, num_sampled), got {shape}")
        if shape[1] > self.params.range_max:
            raise self.error(f"cannot draw {shape[1]} distinct classes from range_max={self.params.range_max}")
        return [], [shape, (shape[0],)], []

    def infer_type(self, in_types):
        return [], [np.int64, np.int64], []


def _row(rng, range_max: int, needed: int) -> tuple[np.ndarray, int]:
    """``needed`` distinct classes in draw order and the number of draws that took."""
    log_range = math.log(range_max + 1)
    seen = np.zeros(range_max, dtype=bool)
    taken: list[np.ndarray] = []
    tries, have = 0, 0
    chunk = max(2 * needed, 1024)
    while have < needed:
        draws = (np.exp(rng.random(chunk) * log_range) - 1).astype(np.int64) % range_max
        _, first = np.unique(draws, return_index=True)
        first = np.sort(first[~seen[draws[first]]])  # first draws of classes not seen before, in order
        if have + first.size >= needed:
            first = first[:needed - have]
            tries += int(first[-1]) + 1
        else:
            tries += chunk
        new = draws[first]
        seen[new] = True
        taken.append(new)
        have += new.size
    return np.concatenate(taken), tries


def _unique_zipfian(xp, p, op_ctx):
    rng = _rng(op_ctx)
    batch, needed = tuple(p.shape)
    samples = np.empty((batch, needed), dtype=np.int64)
    tries = np.empty(batch, dtype=np.int64)
    for b in range(batch):
        samples[b], tries[b] = _row(rng, p.range_max, needed)
    return xp.asarray(samples), xp.asarray(tries)


defop("_sample_unique_zipfian", param=UniqueZipfianParam, base=_UniqueZipfianProperty, arguments=(),
      outputs=("samples", "num_trials"), wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,), fwd=_unique_zipfian,
      doc="Distinct log-uniform (Zipfian) classes per row of shape=(batch_size, num_sampled), and the number of "
          "draws each row took.")
