"""Table rows: the box ops against numpy references (MXNet 1.9.1's values: test_detection_ops.py)."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform


def _boxes(rng, shape, dtype):
    xy = rng.uniform(0, 1, shape[:-1] + (2,))
    return np.concatenate([xy, xy + rng.uniform(0.1, 0.5, shape[:-1] + (2,))], -1).astype(dtype)


def _iou(a, b, format="corner"):
    a, b = a.reshape(-1, 1, 4), b.reshape(1, -1, 4)
    w = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    h = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = w * h
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def _matching(s, threshold, is_ascend=False):
    rows, cols = np.full(s.shape[0], -1.0), np.full(s.shape[1], -1.0)
    for j in np.argsort(-s.ravel() if not is_ascend else s.ravel(), kind="stable"):
        r, c = divmod(int(j), s.shape[1])
        if rows[r] == -1 and cols[c] == -1:
            if not s.ravel()[j] > threshold:
                break
            rows[r], cols[c] = c, r
    return rows.astype(s.dtype), cols.astype(s.dtype)


def _decode(d, a, std0=1.0, std1=1.0, std2=1.0, std3=1.0):
    ax, ay, aw, ah = (a[..., k] for k in range(4))
    ox, oy = d[..., 0] * std0 * aw + ax, d[..., 1] * std1 * ah + ay
    ow, oh = np.exp(d[..., 2] * std2) * aw / 2, np.exp(d[..., 3] * std3) * ah / 2
    return np.stack([ox - ow, oy - oh, ox + ow, oy + oh], -1)


def _encode(samples, matches, anchors, refs, means, stds):
    ref = np.take_along_axis(refs, matches.astype(int)[..., None].repeat(4, -1), 1)
    size = lambda b: (b[..., 2] - b[..., 0], b[..., 3] - b[..., 1])  # noqa: E731
    (rw, rh), (aw, ah) = size(ref), size(anchors)
    t = np.stack([(ref[..., 0] + rw / 2 - anchors[..., 0] - aw / 2) / aw,
                  (ref[..., 1] + rh / 2 - anchors[..., 1] - ah / 2) / ah, np.log(rw / aw), np.log(rh / ah)], -1)
    valid = (samples > 0.5)[..., None]
    return np.where(valid, (t - means) / stds, 0), np.broadcast_to(valid, t.shape).astype(anchors.dtype)


def _prior(x, sizes, ratios):
    h, w = x.shape[2:]
    cy, cx = np.meshgrid((np.arange(h) + 0.5) / h, (np.arange(w) + 0.5) / w, indexing="ij")
    halves = [(s * h / w * np.sqrt(ratios[0]) / 2, s / np.sqrt(ratios[0]) / 2) for s in sizes]
    halves += [(sizes[0] * h / w * np.sqrt(r) / 2, sizes[0] / np.sqrt(r) / 2) for r in ratios[1:]]
    hw = np.array(halves)
    out = np.stack([cx[..., None] - hw[:, 0], cy[..., None] - hw[:, 1], cx[..., None] + hw[:, 0],
                    cy[..., None] + hw[:, 1]], -1)
    return out.reshape(1, -1, 4).astype(x.dtype)


def _nms(d, overlap_thresh, id_index, force_suppress=False):
    out = np.full_like(d, -1)
    kept = []
    for r in sorted(range(len(d)), key=lambda r: -d[r, 1]):
        if d[r, 1] <= 0:
            continue
        if all((not force_suppress and d[k, id_index] != d[r, id_index]) or _iou(d[k, 2:], d[r, 2:])[0, 0] <= overlap_thresh for k in kept):
            kept.append(r)
    out[: len(kept)] = d[kept]
    return out


def _detections(rng, shape, dtype):
    n = shape[0]
    return np.concatenate([rng.integers(0, 2, (n, 1)), rng.permutation(n)[:, None] / n + 0.05,
                           _boxes(rng, (n, 4), np.float64)], -1).astype(dtype)


def _positive(rng, shape, dtype):
    return rng.uniform(0.1, 0.6, shape).astype(dtype)


def _target_check(outs, inputs, params):
    loc, mask, cls = outs
    assert loc.shape == mask.shape == (2, 16) and cls.shape == (2, 4)
    assert set(np.unique(mask)) <= {0, 1} and np.all((cls == -1) | (cls >= 0))  # ignore_label -1, classes + 1


def _labels(rng, shape, dtype):
    return np.concatenate([rng.integers(0, 2, shape[:-1] + (1,)), _boxes(rng, shape[:-1] + (4,), np.float64)],
                          -1).astype(dtype)


CASES = [
    Case("_contrib_MultiBoxTarget", [((1, 4, 4), (2, 2, 5), (2, 3, 4))], check=_target_check,
         gens=[_boxes, _labels, uniform()], params=dict(negative_mining_ratio=1.0)),
    Case("_contrib_box_nms", [((8, 6),)], ref=_nms, params=dict(overlap_thresh=0.2, id_index=0), gens=_detections,
         grad=False, name="box_nms-per-class"),  # a float class id compared for equality: no numeric gradient
    Case("_contrib_box_nms", [((8, 6),)], ref=_nms, params=dict(overlap_thresh=0.2, id_index=0, force_suppress=True),
         gens=_detections),
    Case("_contrib_box_iou", [((2, 3, 4), (5, 4))], ref=lambda a, b, format: _iou(a, b).reshape(2, 3, 5),
         params=dict(format="corner"), gens=_boxes, grad="zero"),
    Case("_contrib_bipartite_matching", [((4, 3),)], ref=_matching, params=dict(threshold=0.05), grad="zero"),
    Case("_contrib_box_decode", [((2, 5, 4), (1, 5, 4))], ref=_decode, params=dict(std0=0.1, std2=0.2),
         gens=[uniform(-0.5, 0.5), _positive], grad="zero"),
    Case("_contrib_box_encode", [((2, 5), (2, 5), (2, 5, 4), (2, 3, 4), (4,), (4,))], ref=_encode,
         gens=[uniform(0, 1), integers(0, 3), _boxes, _boxes, uniform(-0.1, 0.1), uniform(0.1, 0.3)], grad="zero"),
    Case("_contrib_MultiBoxPrior", [((1, 2, 3, 4),)], ref=_prior, params=dict(sizes=(0.5, 0.25), ratios=(1, 2)),
         grad="zero"),
]
