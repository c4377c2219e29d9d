"""Contrib ops (MXNet's src/operator/contrib, ``_contrib_*``; ``mx.nd.contrib`` / ``mx.sym.contrib``)."""

from . import (  # noqa: F401  (importing registers the ops)
    all_finite,
    arrays,
    boolean_mask,
    bounding_box,
    control_flow,
    count_sketch,
    deformable_conv,
    elemwise_extra,
    fft,
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
