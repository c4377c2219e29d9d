"""Record MXNet 1.9.1's vision ops (AdaptiveAvgPooling2D, BilinearResize2D, ROIAlign, PSROIPooling, Proposal,
MultiProposal, MultiBoxDetection) and the image resize of every interp. By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_vision/make_fixtures.py

Per case its inputs ``<case>/in0``..., outputs ``<case>/out0``..., the gradient of each input under the head
gradient ``<case>/head`` (``<case>/grad0``...; ops with a gradient only) and ``<case>/spec`` (op and params as
JSON), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def record(case, op, inputs, params, grad=False, module="contrib"):
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        outs = getattr(getattr(mx.nd, module), op)(*arrays, **params)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    if grad:
        head = rng.normal(size=outs[0].shape).astype(inputs[0].dtype)
        outs[0].backward(mx.nd.array(head, dtype=head.dtype))
        store[f"{case}/head"] = head
        for i, a in enumerate(arrays):
            store[f"{case}/grad{i}"] = a.grad.asnumpy()
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    for i, o in enumerate(outs):
        store[f"{case}/out{i}"] = o.asnumpy()
    prefix = "_contrib_" if module == "contrib" else "_image_"
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=prefix + op, params=params)))


x = rng.normal(size=(2, 3, 7, 5)).astype(np.float32)
for case, params in [("adaptive_3", dict(output_size=3)), ("adaptive_2x4", dict(output_size=(2, 4))),
                     ("adaptive_default", {}), ("adaptive_up", dict(output_size=(9, 11)))]:
    record(case, "AdaptiveAvgPooling2D", [x], params, grad=True)
for case, params in [("bilinear_size", dict(height=4, width=9)),
                     ("bilinear_half_pixel", dict(height=11, width=3, align_corners=False)),
                     ("bilinear_scale", dict(scale_height=1.7, scale_width=0.6, align_corners=False)),
                     ("bilinear_odd_scale", dict(mode="odd_scale", scale_height=2.0, scale_width=0.5)),
                     ("bilinear_to_even_up", dict(mode="to_even_up")),
                     ("bilinear_to_odd_down", dict(mode="to_odd_down", align_corners=False)),
                     ("bilinear_to_even_down", dict(mode="to_even_down")),
                     ("bilinear_to_odd_up", dict(mode="to_odd_up", align_corners=False)),
                     ("bilinear_1x1", dict(height=1, width=1))]:
    record(case, "BilinearResize2D", [x], params, grad=True)
record("bilinear_like", "BilinearResize2D", [x, np.zeros((2, 1, 3, 8), np.float32)], dict(mode="like"), grad=True)

for dt in ("float32", "float64"):
    data = rng.normal(size=(2, 8, 9, 11)).astype(dt)
    rois = np.array([[0, 1.3, 2.2, 30.1, 20.7], [1, 0, 0, 40, 35], [1, 25.5, 3.1, 27.0, 33.9],
                     [0, -5, -3, 8, 5.5], [1, 38, 30, 60, 50]], dt)
    record(f"roi_align_{dt}", "ROIAlign", [data, rois], dict(pooled_size=(3, 2), spatial_scale=0.25), grad=True)
    record(f"roi_align_sample2_aligned_{dt}", "ROIAlign", [data, rois],
           dict(pooled_size=(2, 2), spatial_scale=0.25, sample_ratio=2, aligned=True), grad=True)
    record(f"roi_align_position_sensitive_{dt}", "ROIAlign", [data, rois],
           dict(pooled_size=(2, 2), spatial_scale=0.25, position_sensitive=True), grad=True)
    record(f"psroi_{dt}", "PSROIPooling", [data, rois], dict(spatial_scale=0.25, output_dim=2, pooled_size=2),
           grad=True)
    record(f"psroi_group1_{dt}", "PSROIPooling", [data, rois],
           dict(spatial_scale=0.3, output_dim=8, pooled_size=3, group_size=1), grad=True)

A = 6
cls = rng.uniform(0, 1, (2, 2 * A, 5, 6)).astype(np.float32)
deltas = rng.normal(0, 0.3, (2, 4 * A, 5, 6)).astype(np.float32)
info = np.array([[70, 90, 1.0], [50, 80, 0.5]], np.float32)
rpn = dict(scales=(2, 4, 8), ratios=(0.5, 1), feature_stride=16, rpn_pre_nms_top_n=40, rpn_post_nms_top_n=20,
           threshold=0.5, rpn_min_size=8, output_score=True)
record("proposal", "Proposal", [cls[:1], deltas[:1], info[:1]], rpn)
record("proposal_defaults", "Proposal", [cls[:1], deltas[:1], info[:1]], dict(scales=(2, 4, 8), ratios=(0.5, 1)))
record("multi_proposal", "MultiProposal", [cls, deltas, info], rpn)
record("multi_proposal_iou_loss", "MultiProposal", [cls, deltas * 10, info],
       dict(rpn, iou_loss=True, rpn_pre_nms_top_n=-1, rpn_post_nms_top_n=200, threshold=0.3))

n = 30
logits = rng.normal(0, 2, (2, 4, n))
prob = (np.exp(logits) / np.exp(logits).sum(1, keepdims=True)).astype(np.float32)
xy = rng.uniform(0, 0.8, (1, n, 2))
anchors = np.concatenate([xy, xy + rng.uniform(0.05, 0.4, (1, n, 2))], -1).astype(np.float32)
loc = rng.normal(0, 1, (2, n * 4)).astype(np.float32)
for case, params in [("detection", {}),
                     ("detection_force_topk", dict(threshold=0.3, nms_threshold=0.3, force_suppress=True, nms_topk=5)),
                     ("detection_no_nms", dict(clip=False, nms_threshold=0, variances=(0.2, 0.2, 0.1, 0.1))),
                     ("detection_tight", dict(nms_threshold=0.1, threshold=0.2))]:
    record(case, "MultiBoxDetection", [prob, loc, anchors], params)

# mx.nd.image.resize (OpenCV inside MXNet) for every interp on uint8 and float images
img8 = rng.integers(0, 256, (13, 17, 3)).astype(np.uint8)
for dt, img in (("uint8", img8), ("float32", img8.astype(np.float32) + rng.uniform(0, 1, img8.shape).astype(np.float32)),
                ("float64", rng.uniform(0, 255, (13, 17, 3)))):
    for interp in range(5):
        for tag, size in (("up", (23, 29)), ("down", (7, 5)), ("mixed", (9, 20)), ("half", (8, 6))):
            record(f"resize_{dt}_{interp}_{tag}", "resize", [img], dict(size=size, interp=interp), module="image")
record("resize_batch_bicubic", "resize", [rng.uniform(0, 255, (2, 9, 6, 2)).astype(np.float32)],
       dict(size=(4, 13), interp=2), module="image")
np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
