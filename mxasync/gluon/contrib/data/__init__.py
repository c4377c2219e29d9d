"""``gluon.contrib.data``: extra samplers."""

from .sampler import IntervalSampler

__all__ = ["IntervalSampler"]
