"""Imports every op family so that they register (one module per family)."""

from . import (  # noqa: F401
    elemwise_binary,
    elemwise_unary,
    indexing,
    join_split,
    loss,
    nn_act,
    nn_conv,
    nn_dense,
    nn_norm,
    optimizer_extra_ops,
    optimizer_ops,
    random_ops,
    reduce,
    shape_ops,
    simple_op,
)
