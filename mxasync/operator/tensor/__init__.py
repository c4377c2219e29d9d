"""Tensor ops (MXNet's src/operator/tensor): elementwise, broadcast, reduce, indexing, shape/layout, init, ordering."""

from . import (  # noqa: F401  (importing registers the ops)
    amp_cast,
    array_attrs,
    cumsum,
    element_0index,
    elemwise_binary,
    elemwise_unary,
    gather_scatter,
    hard_sigmoid,
    indexing,
    init,
    join_split,
    layout,
    ordering,
    pick_diag,
    ravel,
    reduce,
    shape,
    shape_like,
    slice_split,
    special,
)
