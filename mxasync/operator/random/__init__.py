"""Random samplers (MXNet's src/operator/random): scalar-parameter and per-element distributions."""

from . import distributions, like, samplers, unique_zipfian  # noqa: F401
