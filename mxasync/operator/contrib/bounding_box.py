"""Box ops of MXNet's detection models (src/operator/contrib/bounding_box): ``box_nms``, ``box_iou``,
``bipartite_matching``, ``box_encode``, ``box_decode``; and ``MultiBoxPrior``.

Boxes are ``[xmin, ymin, xmax, ymax]`` ("corner") or ``[x, y, width, height]`` ("center").
As in MXNet their gradients are zero, but for ``box_nms``, whose output rows take their
gradient back to the input rows they came from.

>>> import mxasync as mx
>>> a = mx.nd.array([[0, 0, 2, 2]]); b = mx.nd.array([[1, 1, 3, 3], [0, 0, 2, 2]])
>>> [round(float(v), 4) for v in mx.nd.contrib.box_iou(a, b).asnumpy().ravel()]
[0.1429, 1.0]
>>> rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]), threshold=1e-12)
>>> rows.asnumpy().tolist(), cols.asnumpy().tolist()
([1.0, -1.0, 0.0], [2.0, 0.0])
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["BoxNmsParam", "BoxIouParam", "BipartiteMatchingParam", "BoxDecodeParam", "MultiBoxPriorParam"]


def _zero_grad(xp, p, og, ins, outs):
    return [xp.zeros_like(x) for x in ins]


def _corners(xp, boxes, fmt):
    """(left, top, right, bottom) of ``boxes[..., :4]``."""
    a, b, c, d = (boxes[..., k] for k in range(4))
    if fmt == "corner":
        return a, b, c, d
    return a - c / 2, b - d / 2, a + c / 2, b + d / 2


# -- box_iou ------------------------------------------------------------------------------------
class BoxIouParam(OpParam):
    format: Literal["corner", "center"] = Field("corner", description="how boxes are encoded: corner "
                                                "[xmin, ymin, xmax, ymax] or center [x, y, width, height]")


class _BoxIouProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        lhs, rhs = in_shapes
        for name, s in (("lhs", lhs), ("rhs", rhs)):
            if s is not None and (len(s) < 1 or s[-1] != 4):
                raise self.error(f"{name} must end in an axis of 4 box coordinates, got shape {tuple(s)}")
        if lhs is None or rhs is None:
            return list(in_shapes), [None], []
        return list(in_shapes), [tuple(lhs[:-1]) + tuple(rhs[:-1])], []


def _box_iou(xp, p, lhs, rhs):
    l1, t1, r1, b1 = _corners(xp, lhs.reshape(-1, 1, 4), p.format)
    l2, t2, r2, b2 = _corners(xp, rhs.reshape(1, -1, 4), p.format)
    w = xp.maximum(xp.minimum(r1, r2) - xp.maximum(l1, l2), 0)
    h = xp.maximum(xp.minimum(b1, b2) - xp.maximum(t1, t2), 0)
    inter = w * h
    union = (r1 - l1) * (b1 - t1) + (r2 - l2) * (b2 - t2) - inter
    iou = xp.where(inter > 0, inter / xp.where(inter > 0, union, 1), 0)
    return iou.astype(lhs.dtype).reshape(lhs.shape[:-1] + rhs.shape[:-1])


defop("_contrib_box_iou", param=BoxIouParam, base=_BoxIouProperty, arguments=("lhs", "rhs"), fwd=_box_iou,
      zero_gradient=True, bwd=_zero_grad, deps="in",
      doc="Intersection over union of every box of lhs with every box of rhs: shape lhs[:-1] + rhs[:-1].")


# -- bipartite_matching -------------------------------------------------------------------------
class BipartiteMatchingParam(OpParam):
    is_ascend: bool = Field(False, description="match the smallest scores first (set threshold accordingly)")
    threshold: float = Field(description="stop at a score <= threshold (>= with is_ascend)")
    topk: int = Field(-1, description="stop after this many matches (-1: no limit)")


class _MatchingProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None, None], []
        if len(d) < 2:
            raise self.error(f"score matrix must have dim >= 2, got shape {tuple(d)}")
        return [d], [tuple(d[:-1]), tuple(d[:-2]) + (d[-1],)], []


def _bipartite_matching(xp, p, scores):
    rows, cols = scores.shape[-2], scores.shape[-1]
    flat = scores.reshape(-1, rows * cols)
    host = np.asarray(flat.tolist(), dtype=np.float64)
    row_marker = np.full((len(host), rows), -1.0)
    col_marker = np.full((len(host), cols), -1.0)
    for b, s in enumerate(host):  # greedy: the best remaining score whose row and column are both free
        order = np.argsort(s if p.is_ascend else -s, kind="stable")
        count = 0
        for j in order:
            r, c = divmod(int(j), cols)
            if row_marker[b, r] != -1 or col_marker[b, c] != -1:
                continue
            if (s[j] < p.threshold) if p.is_ascend else (s[j] > p.threshold):
                row_marker[b, r], col_marker[b, c] = c, r
                count += 1
                if 0 < p.topk < count:  # MXNet's count: the match that passes topk is kept
                    break
            else:
                break
    shape = scores.shape[:-2]
    return (xp.asarray(row_marker, dtype=scores.dtype).reshape(shape + (rows,)),
            xp.asarray(col_marker, dtype=scores.dtype).reshape(shape + (cols,)))


defop("_contrib_bipartite_matching", param=BipartiteMatchingParam, base=_MatchingProperty, fwd=_bipartite_matching,
      outputs=("row_marker", "col_marker"), zero_gradient=True, bwd=_zero_grad, deps="in",
      doc="Greedy bipartite matching of a (..., rows, cols) score matrix: each row's matched column and each "
          "column's matched row (-1: none).")


# -- box_encode / box_decode ----------------------------------------------------------------------
class _BoxEncodeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        samples, matches, anchors, refs, means, stds = in_shapes
        for name, s in (("anchors", anchors), ("refs", refs)):
            if s is not None and (len(s) != 3 or s[-1] != 4):
                raise self.error(f"{name} must have shape (batch, n, 4), got {tuple(s)}")
        out = tuple(anchors) if anchors is not None else None
        bn = out[:2] if out is not None else None
        return [samples or bn, matches or bn, anchors, refs, (4,), (4,)], [out, out], []


def _box_encode(xp, p, samples, matches, anchors, refs, means, stds):
    idx = matches.astype(np.int64)
    ref = xp.take_along_axis(refs, idx[..., None].repeat(4, axis=-1), axis=1)
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    rx, ry = ref[..., 0] + rw * 0.5, ref[..., 1] + rh * 0.5
    aw, ah = anchors[..., 2] - anchors[..., 0], anchors[..., 3] - anchors[..., 1]
    ax, ay = anchors[..., 0] + aw * 0.5, anchors[..., 1] + ah * 0.5
    valid = (samples > 0.5)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = xp.stack([(rx - ax) / aw, (ry - ay) / ah, xp.log(rw / aw), xp.log(rh / ah)], axis=-1)
        t = (t - means) / stds
    targets = xp.where(valid, t, 0).astype(anchors.dtype)
    return targets, xp.broadcast_to(valid, targets.shape).astype(anchors.dtype)


defop("_contrib_box_encode", base=_BoxEncodeProperty, fwd=_box_encode, zero_gradient=True, bwd=_zero_grad, deps="in",
      arguments=("samples", "matches", "anchors", "refs", "means", "stds"), outputs=("targets", "masks"),
      doc="Regression targets of anchors towards their matched reference boxes (center offsets over the anchor "
          "size and log size ratios, normalised by means/stds), and masks of the positive samples (> 0.5).")


class BoxDecodeParam(OpParam):
    std0: float = Field(1.0, description="the scale of the x offsets")
    std1: float = Field(1.0, description="the scale of the y offsets")
    std2: float = Field(1.0, description="the scale of the log width ratios")
    std3: float = Field(1.0, description="the scale of the log height ratios")
    clip: float = Field(-1.0, description="the largest log size ratio before exp (negative: no clipping)")
    format: Literal["corner", "center"] = Field("center", description="how the anchors are encoded")


class _BoxDecodeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        data, anchors = in_shapes
        for name, s in (("data", data), ("anchors", anchors)):
            if s is not None and s[-1] != 4:
                raise self.error(f"{name} must end in an axis of 4, got shape {tuple(s)}")
        return list(in_shapes), [data], []


def _box_decode(xp, p, data, anchors):
    anchors = anchors.reshape(-1, 4)[: data.shape[-2]] if anchors.ndim > 2 else anchors
    ax, ay, aw, ah = (anchors[..., k] for k in range(4))
    if p.format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw * 0.5, ay + ah * 0.5
    ox = data[..., 0] * p.std0 * aw + ax
    oy = data[..., 1] * p.std1 * ah + ay
    dw, dh = data[..., 2] * p.std2, data[..., 3] * p.std3
    if p.clip > 0:
        dw, dh = xp.minimum(dw, p.clip), xp.minimum(dh, p.clip)
    ow, oh = xp.exp(dw) * aw * 0.5, xp.exp(dh) * ah * 0.5
    return xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1).astype(data.dtype)


defop("_contrib_box_decode", param=BoxDecodeParam, base=_BoxDecodeProperty, fwd=_box_decode,
      arguments=("data", "anchors"), zero_gradient=True, bwd=_zero_grad, deps="in",
      doc="Boxes (corner format) from regression offsets relative to anchors: the inverse of box_encode.")


# -- MultiBoxPrior --------------------------------------------------------------------------------
class MultiBoxPriorParam(OpParam):
    sizes: tuple[float, ...] = Field((1.0,), description="the anchor sizes, as fractions of the image")
    ratios: tuple[float, ...] = Field((1.0,), description="the anchor aspect ratios (width / height)")
    clip: bool = Field(False, description="clip the boxes to [0, 1]")
    steps: tuple[float, ...] = Field((-1.0, -1.0), description="the (y, x) distance of anchor centres "
                                     "(negative: 1 / the feature map's height and width)")
    offsets: tuple[float, ...] = Field((0.5, 0.5), description="the (y, x) offset of the first centre, in steps")


class _MultiBoxPriorProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        if len(d) < 4:
            raise self.error(f"data must be (batch, channels, height, width), got shape {tuple(d)}")
        p = self.params
        per_pixel = len(p.sizes) + len(p.ratios) - 1
        return [d], [(1, d[2] * d[3] * per_pixel, 4)], []


def _multibox_prior(xp, p, data):
    h, w = data.shape[2], data.shape[3]
    step_y, step_x = p.steps
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = 1.0 / h, 1.0 / w
    cy = ((np.arange(h, dtype=np.float32) + np.float32(p.offsets[0])) * np.float32(step_y))[:, None]
    cx = ((np.arange(w, dtype=np.float32) + np.float32(p.offsets[1])) * np.float32(step_x))[None, :]
    halves = []  # per anchor (half width, half height): the sizes at the first ratio, then the ratios at sizes[0]
    r0 = np.sqrt(np.float32(p.ratios[0])) if p.ratios else np.float32(1)
    for size in p.sizes:
        halves.append((np.float32(size) * h / w * r0 / 2, np.float32(size) / r0 / 2))
    for ratio in p.ratios[1:]:
        r = np.sqrt(np.float32(ratio))
        halves.append((np.float32(p.sizes[0]) * h / w * r / 2, np.float32(p.sizes[0]) / r / 2))
    hw = np.array(halves, dtype=np.float32)  # (A, 2)
    cx = np.broadcast_to(cx, (h, w))[..., None]
    cy = np.broadcast_to(cy, (h, w))[..., None]
    boxes = np.stack([cx - hw[:, 0], cy - hw[:, 1], cx + hw[:, 0], cy + hw[:, 1]], axis=-1)  # (h, w, A, 4)
    if p.clip:
        boxes = np.clip(boxes, 0, 1)
    return xp.asarray(boxes.reshape(1, -1, 4), dtype=data.dtype)


defop("_contrib_MultiBoxPrior", param=MultiBoxPriorParam, base=_MultiBoxPriorProperty, fwd=_multibox_prior,
      zero_gradient=True, bwd=_zero_grad, deps="in", aliases=("_npx_multibox_prior",),
      doc="SSD's anchor boxes for every pixel of a feature map: (1, height * width * anchors, 4), corner format.")


# -- box_nms --------------------------------------------------------------------------------------
class BoxNmsParam(OpParam):
    overlap_thresh: float = Field(0.5, description="suppress a box whose IoU with a kept better one is above this")
    valid_thresh: float = Field(0.0, description="only boxes scoring above this take part")
    topk: int = Field(-1, description="only the topk best valid boxes take part (-1: all)")
    coord_start: int = Field(2, description="the column of the first of the 4 box coordinates")
    score_index: int = Field(1, description="the column of the score")
    id_index: int = Field(-1, description="the column of the class id (-1: none)")
    background_id: int = Field(-1, description="the class id of the background, never kept (with id_index)")
    force_suppress: bool = Field(False, description="suppress across classes too (always without id_index)")
    in_format: Literal["corner", "center"] = Field("corner", description="how the input boxes are encoded")
    out_format: Literal["corner", "center"] = Field("corner", description="how the output boxes are encoded")


class _BoxNmsProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        p = self.params
        width = d[-1] if len(d) >= 2 else 0
        if len(d) < 2 or p.coord_start + 4 > width or not 0 <= p.score_index < width or p.id_index >= width:
            raise self.error(f"data {tuple(d)} must be (..., boxes, columns) with columns holding the score "
                             f"({p.score_index}), coordinates ({p.coord_start}..{p.coord_start + 3}) and id "
                             f"({p.id_index})")
        return [d], [d], []


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _nms_order(p, rows):
    """Per batch row block (n, width): the input row of each output row that is kept (in output order)."""
    score = rows[:, p.score_index]
    valid = score > p.valid_thresh
    if p.id_index >= 0:  # the background class (default -1) never takes part
        valid &= rows[:, p.id_index] != p.background_id
    order = np.flatnonzero(valid)
    order = order[np.argsort(-score[order], kind="stable")]
    if p.topk > 0:
        order = order[: p.topk]
    box = rows[order, p.coord_start:p.coord_start + 4].astype(np.float64)
    left, top, right, bottom = _corners(np, box, p.in_format)
    w = np.maximum(np.minimum(right[:, None], right[None]) - np.maximum(left[:, None], left[None]), 0)
    h = np.maximum(np.minimum(bottom[:, None], bottom[None]) - np.maximum(top[:, None], top[None]), 0)
    inter = w * h
    area = (right - left) * (bottom - top)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None] - inter)
    same_class = np.ones_like(iou, dtype=bool)
    if not p.force_suppress and p.id_index >= 0:
        ids = rows[order, p.id_index]
        same_class = ids[:, None] == ids[None]
    keep = np.ones(len(order), dtype=bool)
    for i in range(len(order)):
        if keep[i]:
            keep[i + 1:] &= ~((iou[i, i + 1:] > p.overlap_thresh) & same_class[i, i + 1:])
    return order[keep]


def _box_nms(xp, p, data):
    host = _host(data)
    flat = host.reshape((-1,) + host.shape[-2:])
    out = np.full_like(flat, -1)
    for b, rows in enumerate(flat):
        kept = _nms_order(p, rows)
        out[b, : len(kept)] = rows[kept]
        if p.in_format != p.out_format:
            c = p.coord_start
            box = rows[kept, c:c + 4].astype(np.float64)
            if p.out_format == "center":
                conv = np.stack([(box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2, box[:, 2] - box[:, 0],
                                 box[:, 3] - box[:, 1]], -1)
            else:
                conv = np.stack(_corners(np, box, "center"), -1)
            out[b, : len(kept), c:c + 4] = conv
    return xp.asarray(out.reshape(host.shape))


def _box_nms_bwd(xp, p, og, ins, outs):
    host, g = _host(ins[0]), _host(og[0])
    flat, gflat = host.reshape((-1,) + host.shape[-2:]), g.reshape((-1,) + host.shape[-2:])
    grad = np.zeros_like(gflat)
    for b, rows in enumerate(flat):  # each kept row's gradient goes back to the input row it came from
        kept = _nms_order(p, rows)
        grad[b, kept] = gflat[b, : len(kept)]
    return [xp.asarray(grad.reshape(host.shape))]


defop("_contrib_box_nms", param=BoxNmsParam, base=_BoxNmsProperty, fwd=_box_nms, bwd=_box_nms_bwd, deps="og,in",
      aliases=("_contrib_box_non_maximum_suppression",),
      doc="Non-maximum suppression of (..., boxes, columns) detections: the kept boxes sorted by score, then rows "
          "of -1.")
