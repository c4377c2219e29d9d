"""Contrib ops (MXNet's src/operator/contrib, ``_contrib_*``; ``mx.nd.contrib`` / ``mx.sym.contrib``)."""

from . import (  # noqa: F401  (importing registers the ops)
    all_finite,
    arrays,
    bounding_box,
    control_flow,
    deformable_conv,
    elemwise_extra,
    krprod,
    multi_lars,
    multi_sum_sq,
    multibox_detection,
    multibox_target,
    proposal,
    reset_arrays,
    roi_align,
    spatial_resize,
    sync_batch_norm,
    transformer,
)
