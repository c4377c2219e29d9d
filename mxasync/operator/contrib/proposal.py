"""``Proposal`` and ``MultiProposal``: Faster R-CNN's region proposal layer (MXNet's contrib/proposal
and contrib/multi_proposal), in MXNet's float32 arithmetic.

Per image: anchors from ``scales`` x ``ratios`` (ratios outer) around a ``feature_stride``
square, moved to every feature-map cell; each decoded by ``bbox_pred`` (center/size deltas,
or corner offsets with ``iou_loss``) and clipped to the image (``im_info`` rows: height,
width, scale). Cells beyond the image and boxes smaller than ``rpn_min_size * scale`` get
score -1 (the small ones are also grown by half the minimum size, as MXNet does). The
``rpn_pre_nms_top_n`` best (stable order) go through non-maximum suppression (IoU above
``threshold``, pixel-inclusive areas) until ``rpn_post_nms_top_n`` are kept; the output
repeats the kept boxes cyclically to fill ``rpn_post_nms_top_n`` rows of
``[batch_index, x1, y1, x2, y2]``, and ``score`` (visible with ``output_score``) their scores.
``Proposal`` takes one image; ``MultiProposal`` a batch. The gradients are zero, as in MXNet.

>>> import mxasync as mx
>>> cls = mx.nd.zeros((1, 2, 2, 2)); cls[0, 1] = mx.nd.array([[0.9, 0.1], [0.2, 0.8]])
>>> rois = mx.nd.contrib.Proposal(cls, mx.nd.zeros((1, 4, 2, 2)), mx.nd.array([[32, 32, 1]]), scales=(2,),
...                               ratios=(1,), feature_stride=16, rpn_min_size=1, rpn_post_nms_top_n=2)
>>> rois.asnumpy().tolist()
[[0.0, 0.0, 0.0, 23.0, 23.0], [0.0, 8.0, 8.0, 31.0, 31.0]]
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["ProposalParam"]

_F = np.float32


class ProposalParam(OpParam):
    rpn_pre_nms_top_n: int = Field(6000, description="the best-scoring boxes kept before NMS (<= 0: all)")
    rpn_post_nms_top_n: int = Field(300, description="the boxes kept after NMS (the output rows per image)")
    threshold: float = Field(0.7, description="NMS: suppress a box whose IoU with a kept one is above this")
    rpn_min_size: int = Field(16, description="boxes narrower or lower than this (times im_info's scale) score -1")
    scales: tuple[float, ...] = Field((4.0, 8.0, 16.0, 32.0), description="the anchor scales")
    ratios: tuple[float, ...] = Field((0.5, 1.0, 2.0), description="the anchor aspect ratios (height / width)")
    feature_stride: int = Field(16, description="the feature map's stride in image pixels")
    output_score: bool = Field(False, description="make the score output visible")
    iou_loss: bool = Field(False, description="bbox_pred holds corner offsets (IoU loss) instead of deltas")


def _anchors(p) -> np.ndarray:
    """(A, 4) base anchors, ratios outer, scales inner (MXNet's GenerateAnchors)."""
    w = h = _F(p.feature_stride)
    ctr = _F(0.5 * (float(w) - 1.0))
    size = w * h
    out = []
    for ratio in p.ratios:
        for scale in p.scales:
            ratio_f, scale_f = _F(ratio), _F(scale)
            new_w = np.floor(np.sqrt(np.floor(size / ratio_f)) + _F(0.5)) * scale_f
            new_h = np.floor(new_w / scale_f * ratio_f + _F(0.5)) * scale_f
            out.append([ctr - _F(0.5) * (new_w - _F(1)), ctr - _F(0.5) * (new_h - _F(1)),
                        ctr + _F(0.5) * (new_w - _F(1)), ctr + _F(0.5) * (new_h - _F(1))])
    return np.array(out, _F)


def _decode(p, boxes, deltas, info):
    """Decoded and clipped (K, 4) boxes; deltas (A*4, H, W) in MXNet's (h, w, a) order of boxes."""
    a = boxes.shape[0] // (deltas.shape[1] * deltas.shape[2])
    d = deltas.reshape(a, 4, deltas.shape[1], deltas.shape[2]).transpose(2, 3, 0, 1).reshape(-1, 4)
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    if p.iou_loss:
        px1, py1, px2, py2 = x1 + d[:, 0], y1 + d[:, 1], x2 + d[:, 2], y2 + d[:, 3]
    else:  # float32 values, with the double intermediates of MXNet's C++
        w = ((x2 - x1).astype(np.float64) + 1.0).astype(_F)
        h = ((y2 - y1).astype(np.float64) + 1.0).astype(_F)
        cx = (x1 + 0.5 * (w.astype(np.float64) - 1.0)).astype(_F)
        cy = (y1 + 0.5 * (h.astype(np.float64) - 1.0)).astype(_F)
        pcx, pcy = d[:, 0] * w + cx, d[:, 1] * h + cy
        pw, ph = (np.exp(d[:, 2]) * w).astype(np.float64), (np.exp(d[:, 3]) * h).astype(np.float64)
        px1, px2 = (pcx - 0.5 * (pw - 1.0)).astype(_F), (pcx + 0.5 * (pw - 1.0)).astype(_F)
        py1, py2 = (pcy - 0.5 * (ph - 1.0)).astype(_F), (pcy + 0.5 * (ph - 1.0)).astype(_F)
    im_h, im_w = _F(info[0]), _F(info[1])
    xs = [np.maximum(np.minimum(v, im_w - _F(1)), _F(0)) for v in (px1, px2)]
    ys = [np.maximum(np.minimum(v, im_h - _F(1)), _F(0)) for v in (py1, py2)]
    return np.stack([xs[0], ys[0], xs[1], ys[1]], -1).astype(_F)


def _nms(dets, thresh, limit):
    """Indices kept by MXNet's greedy NMS (pixel-inclusive areas), at most ``limit``."""
    x1, y1, x2, y2 = (dets[:, k] for k in range(4))
    area = (x2 - x1 + _F(1)) * (y2 - y1 + _F(1))
    suppressed = np.zeros(len(dets), bool)
    keep = []
    for i in range(len(dets)):
        if len(keep) >= limit:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        w = np.maximum(_F(0), np.minimum(x2[i], x2[i + 1:]) - np.maximum(x1[i], x1[i + 1:]) + _F(1))
        h = np.maximum(_F(0), np.minimum(y2[i], y2[i + 1:]) - np.maximum(y1[i], y1[i + 1:]) + _F(1))
        inter = w * h
        suppressed[i + 1:] |= inter / (area[i] + area[i + 1:] - inter) > _F(thresh)
    return np.array(keep, np.int64)


def _one_image(p, anchors, scores, deltas, info):
    """(rows, scores) of one image: scores (A, H, W) foreground, deltas (A*4, H, W), info (3,)."""
    a, height, width = scores.shape
    fs = p.feature_stride
    shift_x = (np.arange(width) * fs).astype(_F)
    shift_y = (np.arange(height) * fs).astype(_F)
    shifts = np.stack(np.broadcast_arrays(shift_x[None, :, None], shift_y[:, None, None],
                                          shift_x[None, :, None], shift_y[:, None, None]), -1)
    boxes = (anchors[None, None] + shifts).reshape(-1, 4)  # index h * W * A + w * A + a
    score = scores.transpose(1, 2, 0).reshape(-1).astype(_F).copy()
    boxes = _decode(p, boxes, deltas, info)
    real_h, real_w = int(_F(info[0]) / _F(fs)), int(_F(info[1]) / _F(fs))
    hh, ww = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    beyond = np.repeat(((hh >= real_h) | (ww >= real_w)).reshape(-1), a)
    score[beyond] = -1
    min_size = _F(p.rpn_min_size) * _F(info[2])
    small = ((boxes[:, 2] - boxes[:, 0] + _F(1) < min_size) | (boxes[:, 3] - boxes[:, 1] + _F(1) < min_size))
    boxes[small, :2] -= min_size / _F(2)
    boxes[small, 2:] += min_size / _F(2)
    score[small] = -1
    count = len(score)
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    order = np.argsort(-score, kind="stable")[:pre]
    keep = _nms(boxes[order], p.threshold, min(p.rpn_post_nms_top_n, pre))
    picked = order[keep[np.arange(p.rpn_post_nms_top_n) % len(keep)]]
    return boxes[picked], score[picked]


class _ProposalProperty(FunctionalProperty):
    multi: bool = False

    def num_visible_outputs(self) -> int:
        return 2 if self.params.output_score else 1

    def infer_shape(self, in_shapes):
        cls = in_shapes[0]
        if cls is None:
            return list(in_shapes), [None, None], []
        if len(cls) != 4 or cls[1] % 2:
            raise self.error(f"cls_prob has shape {tuple(cls)}; it must be (N, 2 * anchors, H, W)")
        p = self.params
        anchors = len(p.scales) * len(p.ratios)
        if cls[1] // 2 != anchors:
            raise self.error(f"cls_prob has {cls[1]} channels but {len(p.scales)} scales x {len(p.ratios)} ratios "
                             f"need 2 * {anchors}")
        if not self.multi and cls[0] != 1:
            raise self.error(f"cls_prob has batch {cls[0]}; Proposal takes one image (use MultiProposal)")
        want = [cls, (cls[0], cls[1] * 2, cls[2], cls[3]), (cls[0], 3)]
        for name, given, need in zip(("bbox_pred", "im_info"), in_shapes[1:], want[1:], strict=True):
            if given is not None and tuple(given) != need:
                raise self.error(f"{name} has shape {tuple(given)} but cls_prob {tuple(cls)} needs {need}")
        rows = cls[0] * p.rpn_post_nms_top_n
        return want, [(rows, 5), (rows, 1)], []


def _proposal(xp, p, cls_prob, bbox_pred, im_info):
    host = [a.get() if hasattr(a, "get") else np.asarray(a) for a in (cls_prob, bbox_pred, im_info)]
    cls, deltas, info = (h.astype(_F) for h in host)
    a = cls.shape[1] // 2
    anchors = _anchors(p)
    rois, scores = [], []
    for b in range(cls.shape[0]):
        boxes, score = _one_image(p, anchors, cls[b, a:], deltas[b], info[b])
        rois.append(np.concatenate([np.full((len(boxes), 1), b, _F), boxes], -1))
        scores.append(score[:, None])
    dtype = cls_prob.dtype
    return xp.asarray(np.concatenate(rois), dtype=dtype), xp.asarray(np.concatenate(scores), dtype=dtype)


def _zero_grad(xp, p, og, ins, outs):
    return [xp.zeros_like(x) for x in ins]


for _name, _multi, _doc in (("_contrib_Proposal", False, "of one image"),
                            ("_contrib_MultiProposal", True, "of a batch of images")):
    defop(_name, param=ProposalParam, base=_ProposalProperty, fwd=_proposal, bwd=_zero_grad, deps="",
          zero_gradient=True, multi=_multi, arguments=("cls_prob", "bbox_pred", "im_info"),
          outputs=("output", "score"),
          doc=f"Region proposals {_doc} (Faster R-CNN's RPN): anchors decoded by bbox_pred, clipped, filtered by "
              "size, NMS; rows [batch_index, x1, y1, x2, y2] and their scores.")
