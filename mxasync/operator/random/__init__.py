"""Random samplers (MXNet's src/operator/random): scalar-parameter and per-element distributions."""

from . import distributions, like, samplers  # noqa: F401
