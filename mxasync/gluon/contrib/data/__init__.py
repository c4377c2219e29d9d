"""``gluon.contrib.data``: extra samplers and the WikiText data sets."""

from . import sampler, text
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler", "text"]
