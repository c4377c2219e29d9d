"""Random samplers (MXNet's src/operator/random): scalar-parameter and per-element distributions."""

from . import distributions, like, pdf, samplers, unique_zipfian  # noqa: F401
