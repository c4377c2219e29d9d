"""Table rows: the vision ops (adaptive pooling, bilinear resize, ROIAlign, PSROIPooling, proposals,
MultiBoxDetection) against plain-loop numpy references (MXNet 1.9.1's values: test_vision_ops.py)."""

from __future__ import annotations

import math

import numpy as np
from cases import Case, uniform


def _adaptive(x, output_size=()):
    oh, ow = (output_size * 2)[:2] if output_size else (1, 1)
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
            w0, w1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    return out.astype(x.dtype)


def _source(dst, n_in, n_out, align):
    """MXNet's source position, computed in float32 as MXNet does for every dtype."""
    f = np.float32
    if n_out == 1:
        return 0.0
    if align:
        return float(f(n_in - 1) / f(n_out - 1) * f(dst))
    return float(f(max(float(f(n_in) / f(n_out)) * (dst + 0.5) - 0.5, 0.0)))


def _bilinear(x, *like, height=1, width=1, mode="size", align_corners=True):
    h, w = x.shape[2:]
    oh, ow = (like[0].shape[2], like[0].shape[3]) if like else (height, width)
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        y = _source(i, h, oh, align_corners) if oh != h else i
        y0 = int(y)
        y1, ly = min(y0 + 1, h - 1), y - y0
        for j in range(ow):
            s = _source(j, w, ow, align_corners) if ow != w else j
            x0 = int(s)
            x1, lx = min(x0 + 1, w - 1), s - x0
            out[:, :, i, j] = ((1 - ly) * ((1 - lx) * x[:, :, y0, x0] + lx * x[:, :, y0, x1])
                               + ly * ((1 - lx) * x[:, :, y1, x0] + lx * x[:, :, y1, x1]))
    return out.astype(x.dtype)


def _bilinear_point(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return 0 * img[..., 0, 0]
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = min(int(y), h - 1), min(int(x), w - 1)
    y = y0 if y0 == h - 1 else y
    x = x0 if x0 == w - 1 else x
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[..., y0, x0] + (1 - ly) * lx * img[..., y0, x1]
            + ly * (1 - lx) * img[..., y1, x0] + ly * lx * img[..., y1, x1])


def _roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1, position_sensitive=False, aligned=False):
    ph_n, pw_n = pooled_size
    c_out = data.shape[1] // (ph_n * pw_n) if position_sensitive else data.shape[1]
    out = np.zeros((len(rois), c_out, ph_n, pw_n))
    off = 0.5 if aligned else 0.0
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (v * spatial_scale - off for v in box)
        rw, rh = (x2 - x1, y2 - y1) if aligned else (max(x2 - x1, 1), max(y2 - y1, 1))
        gh = sample_ratio if sample_ratio > 0 else math.ceil(rh / ph_n)
        gw = sample_ratio if sample_ratio > 0 else math.ceil(rw / pw_n)
        for i in range(ph_n):
            for j in range(pw_n):
                img = data[int(b)]
                if position_sensitive:
                    img = img[i * pw_n + j::ph_n * pw_n]
                acc = sum(_bilinear_point(img, y1 + (i + (iy + 0.5) / gh) * rh / ph_n,
                                          x1 + (j + (ix + 0.5) / gw) * rw / pw_n)
                          for iy in range(gh) for ix in range(gw))
                out[r, :, i, j] = acc / (gh * gw)
    return out.astype(data.dtype)


def _psroi(data, rois, spatial_scale, output_dim, pooled_size, group_size=0):
    k, g = pooled_size, group_size or pooled_size
    h, w = data.shape[2:]
    out = np.zeros((len(rois), output_dim, k, k))
    rnd = lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)  # noqa: E731
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        sw, sh = rnd(x1) * spatial_scale, rnd(y1) * spatial_scale
        bw = max((rnd(x2) + 1) * spatial_scale - sw, 0.1) / k
        bh = max((rnd(y2) + 1) * spatial_scale - sh, 0.1) / k
        for i in range(k):
            for j in range(k):
                h0, h1 = (min(max(v, 0), h) for v in (math.floor(i * bh + sh), math.ceil((i + 1) * bh + sh)))
                w0, w1 = (min(max(v, 0), w) for v in (math.floor(j * bw + sw), math.ceil((j + 1) * bw + sw)))
                gi, gj = min(i * g // k, g - 1), min(j * g // k, g - 1)
                for c in range(output_dim):
                    win = data[int(b), (c * g + gi) * g + gj, h0:h1, w0:w1]
                    out[r, c, i, j] = win.mean() if win.size else 0
    return out.astype(data.dtype)


def _rois(n, scale):
    def gen(rng, shape, dtype):
        xy = rng.uniform(0, 0.6, (shape[0], 2)) * scale
        wh = rng.uniform(0.1, 0.5, (shape[0], 2)) * scale
        return np.concatenate([rng.integers(0, n, (shape[0], 1)), xy, xy + wh], -1).astype(dtype)
    return gen


def _proposal_check(outs, inputs, params):
    rois, score = outs
    n, rows = inputs[0].shape[0], params["rpn_post_nms_top_n"]
    assert rois.shape == (n * rows, 5) and score.shape == (n * rows, 1)
    assert np.array_equal(rois[:, 0], np.repeat(np.arange(n), rows))
    h, w = inputs[2][0, :2]
    assert np.all(rois[:, 1:] >= -params["rpn_min_size"]) and np.all(rois[:, 3] <= w + params["rpn_min_size"])
    first = score[:rows, 0]  # the kept boxes, best first, then repeated cyclically
    kept = np.flatnonzero(np.r_[True, np.diff(first) <= 0]).size
    assert np.all(np.diff(first[:kept]) <= 0) and kept <= rows


def _cls_prob(rng, shape, dtype):
    return rng.uniform(0, 1, shape).astype(dtype)


def _im_info(rng, shape, dtype):
    return np.tile(np.array([[60, 75, 1.0]]), (shape[0], 1)).astype(dtype)


def _detection(cls_prob, loc_pred, anchor, threshold=0.01, nms_threshold=0.5, force_suppress=False,
               variances=(0.1, 0.1, 0.2, 0.2)):
    out = np.full(cls_prob.shape[:1] + (cls_prob.shape[2], 6), -1.0)
    for b in range(len(cls_prob)):
        rows = []
        for a in range(cls_prob.shape[2]):
            cid = int(np.argmax(cls_prob[b, 1:, a]))
            score = cls_prob[b, 1 + cid, a]
            if score < threshold:
                continue
            al, at, ar, ab = anchor[0, a]
            px, py, pw, ph = loc_pred[b, 4 * a:4 * a + 4]
            cx, cy = px * variances[0] * (ar - al) + (al + ar) / 2, py * variances[1] * (ab - at) + (at + ab) / 2
            hw, hh = np.exp(pw * variances[2]) * (ar - al) / 2, np.exp(ph * variances[3]) * (ab - at) / 2
            rows.append([cid, score, *np.clip([cx - hw, cy - hh, cx + hw, cy + hh], 0, 1)])
        rows.sort(key=lambda row: -row[1])
        for i, row in enumerate(rows):
            for prev in rows[:i]:
                if prev[0] >= 0 and (force_suppress or prev[0] == row[0]):
                    a, c = np.array(prev[2:]), np.array(row[2:])
                    iw = max(0, min(a[2], c[2]) - max(a[0], c[0]))
                    ih = max(0, min(a[3], c[3]) - max(a[1], c[1]))
                    union = np.prod(a[2:] - a[:2]) + np.prod(c[2:] - c[:2]) - iw * ih
                    if iw * ih / union >= nms_threshold:
                        row[0] = -1
                        break
        out[b, :len(rows)] = rows
    return out.astype(cls_prob.dtype)


def _anchors(rng, shape, dtype):
    xy = rng.uniform(0, 0.7, shape[:-1] + (2,))
    return np.concatenate([xy, xy + rng.uniform(0.1, 0.3, shape[:-1] + (2,))], -1).astype(dtype)


def _softmax(rng, shape, dtype):
    e = np.exp(rng.normal(0, 2, shape))
    return (e / e.sum(1, keepdims=True)).astype(dtype)


_PROPOSAL = dict(scales=(2.0, 4.0), ratios=(0.5, 1.0), feature_stride=16, rpn_pre_nms_top_n=12,
                 rpn_post_nms_top_n=6, threshold=0.6, rpn_min_size=4, output_score=True)

CASES = [
    Case("_contrib_AdaptiveAvgPooling2D", [((2, 3, 7, 5),)], ref=_adaptive, params=dict(output_size=(3, 2))),
    Case("_contrib_AdaptiveAvgPooling2D", [((1, 2, 4, 6),)], ref=_adaptive, params=dict(output_size=(5,)),
         name="AdaptiveAvgPooling2D-up"),
    Case("_contrib_BilinearResize2D", [((2, 2, 5, 4),)], ref=_bilinear, params=dict(height=7, width=3)),
    Case("_contrib_BilinearResize2D", [((1, 2, 6, 5),)], ref=_bilinear,
         params=dict(height=4, width=8, align_corners=False), name="BilinearResize2D-half-pixel"),
    Case("_contrib_BilinearResize2D", [((1, 2, 3, 5), (1, 1, 6, 2))], ref=_bilinear, params=dict(mode="like"),
         wrt=(0,), name="BilinearResize2D-like"),
    Case("_contrib_ROIAlign", [((2, 3, 6, 7), (4, 5))], ref=_roi_align, gens=[uniform(), _rois(2, 24)],
         params=dict(pooled_size=(2, 3), spatial_scale=0.25), wrt=(0,)),
    Case("_contrib_ROIAlign", [((2, 8, 6, 7), (3, 5))], ref=_roi_align, gens=[uniform(), _rois(2, 24)],
         params=dict(pooled_size=(2, 2), spatial_scale=0.25, sample_ratio=2, position_sensitive=True, aligned=True),
         wrt=(0,), name="ROIAlign-ps-aligned"),
    Case("_contrib_PSROIPooling", [((2, 8, 6, 7), (4, 5))], ref=_psroi, gens=[uniform(), _rois(2, 24)],
         params=dict(spatial_scale=0.25, output_dim=2, pooled_size=2), wrt=(0,)),
    Case("_contrib_Proposal", [((1, 8, 4, 5), (1, 16, 4, 5), (1, 3))], check=_proposal_check,
         gens=[_cls_prob, uniform(-0.2, 0.2), _im_info], params=_PROPOSAL, dtypes=("float32",)),
    Case("_contrib_MultiProposal", [((2, 8, 4, 5), (2, 16, 4, 5), (2, 3))], check=_proposal_check,
         gens=[_cls_prob, uniform(-0.2, 0.2), _im_info], params=dict(_PROPOSAL, iou_loss=True), dtypes=("float32",)),
    Case("_contrib_MultiBoxDetection", [((2, 3, 10), (2, 40), (1, 10, 4))], ref=_detection,
         gens=[_softmax, uniform(-1, 1), _anchors], params=dict(threshold=0.2, nms_threshold=0.3), grad="zero"),
]
