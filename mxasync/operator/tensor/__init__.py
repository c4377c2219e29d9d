"""Tensor ops (MXNet's src/operator/tensor): elementwise, broadcast, reduce, indexing, shape/layout, init, ordering."""

from . import (  # noqa: F401  (importing registers the ops)
    array_attrs,
    elemwise_binary,
    elemwise_unary,
    gather_scatter,
    indexing,
    init,
    join_split,
    layout,
    ordering,
    pick_diag,
    reduce,
    shape,
    shape_like,
    slice_split,
    special,
)
