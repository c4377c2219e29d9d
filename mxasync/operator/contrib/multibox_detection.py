"""``MultiBoxDetection``: SSD's detections from class probabilities, location predictions and anchors
(MXNet's contrib/multibox_detection), in the input's dtype as MXNet computes them.

Per anchor the best non-background class (classes 1.. of ``cls_prob``; class 0 is the
background whatever ``background_id`` says, as in MXNet's kernel) and its score; anchors
scoring below ``threshold`` are dropped. Boxes are decoded from ``loc_pred`` over the
corner-format anchors with ``variances`` (and clipped to [0, 1] with ``clip``). The kept
rows ``[class_id, score, xmin, ymin, xmax, ymax]`` come first in anchor order; with
``0 < nms_threshold <= 1`` they are sorted by score (stable), rows past ``nms_topk`` get
id -1, and a box whose IoU with a better one of its class (any class with
``force_suppress``) is ``>= nms_threshold`` gets id -1. Other rows are -1. The gradients
are zero, as in MXNet.

>>> import mxasync as mx
>>> cls = mx.nd.array([[[0.1, 0.8], [0.9, 0.2]]])
>>> loc = mx.nd.zeros((1, 8)); anchors = mx.nd.array([[[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.9]]])
>>> mx.nd.contrib.MultiBoxDetection(cls, loc, anchors, threshold=0.5)[0].asnumpy().astype("float64").round(2).tolist()
[[0.0, 0.9, 0.1, 0.1, 0.3, 0.3], [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0]]
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["MultiBoxDetectionParam"]


class MultiBoxDetectionParam(OpParam):
    clip: bool = Field(True, description="clip the boxes to [0, 1]")
    threshold: float = Field(0.01, description="anchors whose best class scores below this are dropped")
    background_id: int = Field(0, description="the background class (kept for MXNet, whose kernel always "
                                              "takes class 0)")
    nms_threshold: float = Field(0.5, description="suppress a box whose IoU with a better one is >= this "
                                                  "(outside (0, 1]: no sorting, no NMS)")
    force_suppress: bool = Field(False, description="suppress across classes too")
    variances: tuple[float, ...] = Field((0.1, 0.1, 0.2, 0.2), description="the scales of the 4 location offsets")
    nms_topk: int = Field(-1, description="only the nms_topk best boxes take part in NMS (-1: all)")


class _DetectionProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        cls, loc, anchor = in_shapes
        if cls is None or anchor is None:
            return list(in_shapes), [None], []
        if len(cls) != 3 or len(anchor) != 3 or anchor[2] != 4 or (loc is not None and len(loc) != 2):
            raise self.error(f"cls_prob {tuple(cls)} must be (batch, classes, anchors), loc_pred "
                             f"{tuple(loc) if loc else None} (batch, anchors * 4), anchor {tuple(anchor)} "
                             "(1, anchors, 4)")
        if cls[2] != anchor[1] or (loc is not None and loc[1] != cls[2] * 4):
            raise self.error(f"the anchors disagree: cls_prob {tuple(cls)}, loc_pred "
                             f"{tuple(loc) if loc else None}, anchor {tuple(anchor)}")
        if len(self.params.variances) != 4:
            raise self.error(f"variances must have 4 values, got {self.params.variances}")
        return [cls, (cls[0], cls[2] * 4), anchor], [(cls[0], anchor[1], 6)], []


def _decode(p, anchors, loc):
    t = anchors.dtype.type
    vx, vy, vw, vh = (np.float32(v) for v in p.variances)
    al, at, ar, ab = (anchors[:, k] for k in range(4))
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / t(2), (at + ab) / t(2)
    ox, oy = loc[:, 0] * vx * aw + ax, loc[:, 1] * vy * ah + ay
    ow, oh = np.exp(loc[:, 2] * vw) * aw / t(2), np.exp(loc[:, 3] * vh) * ah / t(2)
    box = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], -1).astype(anchors.dtype)
    return np.clip(box, 0, 1) if p.clip else box


def _iou(box, others):
    w = np.maximum(0, np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0]))
    h = np.maximum(0, np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1]))
    inter = w * h
    union = (box[2] - box[0]) * (box[3] - box[1]) + (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1]) - inter
    return np.where(union <= 0, 0, inter / np.where(union <= 0, 1, union))


def _one_batch(p, cls, loc, anchors):
    out = np.full((cls.shape[1], 6), -1, cls.dtype)
    fg = cls[1:]
    best = fg.max(0) if len(fg) else np.full(cls.shape[1], -1, cls.dtype)
    ids = np.where(best > -1, fg.argmax(0) + 1 if len(fg) else 0, 0)
    score = np.where(best > -1, best, -1).astype(cls.dtype)
    ids = np.where((ids > 0) & (score < cls.dtype.type(p.threshold)), 0, ids)
    valid = np.flatnonzero(ids > 0)
    rows = np.concatenate([(ids[valid] - 1)[:, None].astype(cls.dtype), score[valid, None],
                           _decode(p, anchors[valid], loc.reshape(-1, 4)[valid])], -1)
    out[: len(rows)] = rows
    if len(rows) < 1 or not 0 < p.nms_threshold <= 1:
        return out
    order = np.argsort(-rows[:, 1], kind="stable")
    keep = len(order) if not 0 < p.nms_topk < len(order) else p.nms_topk
    out[keep: len(rows), 0] = -1
    out[:keep] = rows[order[:keep]]
    for i in range(keep):
        if out[i, 0] < 0:
            continue
        rest = out[i + 1:keep]
        live = rest[:, 0] >= 0
        if not p.force_suppress:
            live &= rest[:, 0] == out[i, 0]
        hit = live & (_iou(out[i, 2:], rest[:, 2:]) >= out.dtype.type(p.nms_threshold))
        rest[hit, 0] = -1
    return out


def _multibox_detection(xp, p, cls_prob, loc_pred, anchor):
    cls, loc, anchors = (a.get() if hasattr(a, "get") else np.asarray(a) for a in (cls_prob, loc_pred, anchor))
    anchors = anchors.reshape(-1, 4).astype(cls.dtype)
    out = np.stack([_one_batch(p, cls[b], loc[b].astype(cls.dtype), anchors) for b in range(cls.shape[0])])
    return xp.asarray(out)


def _zero_grad(xp, p, og, ins, outs):
    return [xp.zeros_like(x) for x in ins]


defop("_contrib_MultiBoxDetection", param=MultiBoxDetectionParam, base=_DetectionProperty, fwd=_multibox_detection,
      bwd=_zero_grad, deps="", zero_gradient=True, arguments=("cls_prob", "loc_pred", "anchor"),
      aliases=("_npx_multibox_detection",),
      doc="SSD's detections: per anchor [class_id, score, xmin, ymin, xmax, ymax], sorted and suppressed per "
          "class (id -1: dropped).")
