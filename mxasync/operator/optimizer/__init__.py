"""Optimizer update ops (MXNet's src/operator/optimizer_op): one weight per op, and fused multi-weight forms."""

from . import multi_sgd, updates  # noqa: F401
