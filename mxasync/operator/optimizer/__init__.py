"""Optimizer update ops (MXNet's src/operator/optimizer_op): one weight per op, and fused multi-weight forms."""

from . import (  # noqa: F401
    adamw,
    follow_the_leader,
    group_adagrad,
    lamb,
    mixed_precision,
    multi_lamb,
    multi_sgd,
    multi_sgd_forms,
    signum,
    updates,
)
