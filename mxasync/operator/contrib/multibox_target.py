"""``MultiBoxTarget``: SSD's training targets (MXNet's src/operator/contrib/multibox_target).

Each ground-truth box (label rows ``[class, xmin, ymin, xmax, ymax, ...]``, ended by a
row of -1) first takes the free anchor it overlaps most (greedy, best pair first); then
every other anchor whose best IoU is above ``overlap_threshold`` is positive too. With
``negative_mining_ratio > 0`` only the ``ratio * positives`` anchors (below
``negative_mining_thresh``) with the lowest background probability are negatives;
else every other anchor is. Outputs: ``loc_target`` (offsets over ``variances``),
``loc_mask`` (1 for positives) and ``cls_target`` (class + 1, 0 for negatives,
``ignore_label`` for the rest). The gradient is zero, as in MXNet.

>>> import mxasync as mx
>>> anchors = mx.nd.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]])
>>> label = mx.nd.array([[[1, 0.1, 0.1, 0.5, 0.6]]])
>>> loc, mask, cls = mx.nd.contrib.MultiBoxTarget(anchors, label, mx.nd.zeros((1, 2, 2)))
>>> cls.asnumpy().tolist(), mask.asnumpy().tolist()
([[2.0, 0.0]], [[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]])
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["MultiBoxTargetParam"]


class MultiBoxTargetParam(OpParam):
    overlap_threshold: float = Field(0.5, description="an anchor whose best IoU is above this is positive")
    ignore_label: float = Field(-1.0, description="the cls_target of anchors neither positive nor negative")
    negative_mining_ratio: float = Field(-1.0, description="negatives per positive (<= 0: every other anchor)")
    negative_mining_thresh: float = Field(0.5, description="only anchors whose best IoU is below this are negatives")
    minimum_negative_samples: int = Field(0, description="the fewest negatives (kept for MXNet; unused, as there)")
    variances: tuple[float, ...] = Field((0.1, 0.1, 0.2, 0.2), description="the scales of the 4 location targets")


class _MultiBoxTargetProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        anchor, label, cls_pred = in_shapes
        if anchor is not None and (len(anchor) != 3 or anchor[-1] != 4):
            raise self.error(f"anchor must be (1, num_anchors, 4), got {tuple(anchor)}")
        if label is not None and (len(label) != 3 or label[-1] < 5):
            raise self.error(f"label must be (batch, num_labels, >= 5), got {tuple(label)}")
        if len(self.params.variances) != 4:
            raise self.error(f"variances must have 4 values, got {self.params.variances}")
        if anchor is None or cls_pred is None:
            return list(in_shapes), [None, None, None], []
        b, n = cls_pred[0], anchor[1]
        return list(in_shapes), [(b, n * 4), (b, n * 4), (b, n)], []


def _iou(anchors, gts):
    w = np.maximum(np.minimum(anchors[:, None, 2], gts[None, :, 2]) - np.maximum(anchors[:, None, 0], gts[None, :, 0]), 0)
    h = np.maximum(np.minimum(anchors[:, None, 3], gts[None, :, 3]) - np.maximum(anchors[:, None, 1], gts[None, :, 1]), 0)
    inter = w * h
    area = lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])  # noqa: E731
    union = area(anchors)[:, None] + area(gts)[None, :] - inter
    return np.where(inter > 0, inter / np.where(union > 0, union, 1), 0)


def _match(p, iou):
    n, m = iou.shape
    best = np.full(n, -1.0)
    which = np.full(n, -1)
    flags = np.full(n, -1)  # 1 positive, 0 negative, -1 ignored
    gt_done = np.zeros(m, bool)
    while not gt_done.all():  # the best remaining (anchor, gt) pair, each used once
        masked = np.where((flags[:, None] == 1) | gt_done[None, :], -np.inf, iou)
        j, k = np.unravel_index(np.argmax(masked), masked.shape)
        if not masked[j, k] > 1e-6:
            break
        best[j], which[j], flags[j], gt_done[k] = masked[j, k], k, 1, True
    if p.overlap_threshold > 0:
        for j in np.flatnonzero(flags != 1):
            k = int(np.argmax(iou[j]))
            best[j], which[j] = iou[j, k], k
            if iou[j, k] > p.overlap_threshold:
                flags[j] = 1
    return best, which, flags


def _multibox_target(xp, p, anchor, label, cls_pred):
    host = lambda a: a.get() if hasattr(a, "get") else np.asarray(a)  # noqa: E731
    anchors = host(anchor).reshape(-1, 4).astype(np.float64)
    labels, preds = host(label).astype(np.float64), host(cls_pred).astype(np.float64)
    b, n = preds.shape[0], anchors.shape[0]
    loc = np.zeros((b, n, 4))
    mask = np.zeros((b, n, 4))
    cls = np.full((b, n), p.ignore_label)
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = anchors[:, 0] + aw / 2, anchors[:, 1] + ah / 2
    for i in range(b):
        ends = np.flatnonzero(labels[i, :, 0] == -1)
        gts = labels[i, : ends[0] if len(ends) else len(labels[i])]
        if len(gts) == 0:
            continue
        iou = _iou(anchors, gts[:, 1:5])
        best, which, flags = _match(p, iou)
        positives = int((flags == 1).sum())
        if p.negative_mining_ratio > 0:
            count = min(int(positives * p.negative_mining_ratio), n - positives)
            if count > 0:
                for j in np.flatnonzero((flags != 1) & (best < 0)):
                    k = int(np.argmax(iou[j]))
                    best[j], which[j] = iou[j, k], k
                pool = np.flatnonzero((best < p.negative_mining_thresh) & (flags == -1))
                logits = preds[i][:, pool]
                prob_bg = np.exp(logits[0] - logits.max(0)) / np.exp(logits - logits.max(0)).sum(0)
                flags[pool[np.argsort(prob_bg, kind="stable")[:count]]] = 0
        else:
            flags[flags != 1] = 0
        pos = np.flatnonzero(flags == 1)
        g = gts[which[pos], 1:5]
        gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
        gx, gy = g[:, 0] + gw / 2, g[:, 1] + gh / 2
        vx, vy, vw, vh = p.variances
        loc[i, pos] = np.stack([(gx - ax[pos]) / aw[pos] / vx, (gy - ay[pos]) / ah[pos] / vy,
                                np.log(gw / aw[pos]) / vw, np.log(gh / ah[pos]) / vh], -1)
        mask[i, pos] = 1
        cls[i, pos] = gts[which[pos], 0] + 1
        cls[i, flags == 0] = 0
    dtype = cls_pred.dtype
    return (xp.asarray(loc.reshape(b, -1), dtype=dtype), xp.asarray(mask.reshape(b, -1), dtype=dtype),
            xp.asarray(cls, dtype=dtype))


def _zero_grad(xp, p, og, ins, outs):
    return [xp.zeros_like(x) for x in ins]


defop("_contrib_MultiBoxTarget", param=MultiBoxTargetParam, base=_MultiBoxTargetProperty, fwd=_multibox_target,
      bwd=_zero_grad, deps="in", zero_gradient=True, arguments=("anchor", "label", "cls_pred"),
      outputs=("loc_target", "loc_mask", "cls_target"), aliases=("_npx_multibox_target",),
      doc="SSD's training targets: location offsets, their mask and class targets for every anchor.")
