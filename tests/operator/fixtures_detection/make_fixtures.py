"""Record MXNet 1.9.1's box ops (box_nms, box_iou, bipartite_matching, box_encode, box_decode, MultiBoxPrior,
MultiBoxTarget). By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_detection/make_fixtures.py

Per case its inputs ``<case>/in0``..., outputs ``<case>/out0``... and ``<case>/spec`` (op and params as JSON),
into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def boxes(*shape):
    xy = rng.uniform(0, 1, shape + (2,))
    wh = rng.uniform(0.1, 0.6, shape + (2,))
    return np.concatenate([xy, xy + wh], axis=-1).astype(np.float32)


def record(case, op, inputs, params):
    outs = getattr(mx.nd.contrib, op)(*[mx.nd.array(x, dtype=x.dtype) for x in inputs], **params)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    for i, o in enumerate(outs):
        store[f"{case}/out{i}"] = o.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="_contrib_" + op, params=params)))


record("iou_corner", "box_iou", [boxes(2, 3), boxes(4)], dict(format="corner"))
record("iou_center", "box_iou", [boxes(3), boxes(2, 2)], dict(format="center"))
scores = rng.uniform(0, 1, (2, 4, 3)).astype(np.float32)
record("matching", "bipartite_matching", [scores], dict(threshold=0.1))
record("matching_ascend", "bipartite_matching", [scores], dict(threshold=0.9, is_ascend=True))
record("matching_topk", "bipartite_matching", [scores], dict(threshold=0.0, topk=1))
anchors, refs = boxes(2, 5), boxes(2, 3)
samples = np.array([[1, 0, 1, -1, 1], [0, 1, 1, 1, 0]], np.float32)
matches = rng.integers(0, 3, (2, 5)).astype(np.float32)
record("encode", "box_encode", [samples, matches, anchors, refs, np.array([0, 0.1, 0, 0], np.float32),
                                np.array([0.1, 0.1, 0.2, 0.2], np.float32)], {})
deltas = rng.normal(0, 0.5, (2, 5, 4)).astype(np.float32)
record("decode_center", "box_decode", [deltas, boxes(1, 5)], dict(std0=0.1, std1=0.1, std2=0.2, std3=0.2))
record("decode_corner_clip", "box_decode", [deltas * 8, boxes(1, 5)], dict(format="corner", clip=1.5))
feature = np.zeros((1, 2, 3, 5), np.float32)
record("prior", "MultiBoxPrior", [feature], dict(sizes=(0.6, 0.3), ratios=(1, 2, 0.5)))
record("prior_clip_steps", "MultiBoxPrior", [feature], dict(sizes=(0.9,), ratios=(3, 1), clip=True, steps=(0.2, 0.1),
                                                           offsets=(0.2, 0.7)))
dets = np.concatenate([rng.integers(0, 3, (2, 12, 1)), rng.uniform(0, 1, (2, 12, 1)), boxes(2, 12)],
                      axis=-1).astype(np.float32)
record("nms", "box_nms", [dets], dict(overlap_thresh=0.3, id_index=0))
record("nms_force_topk", "box_nms", [dets], dict(overlap_thresh=0.2, topk=6, force_suppress=True, valid_thresh=0.2))
record("nms_background_center", "box_nms", [dets], dict(id_index=0, background_id=1, out_format="center"))
mb_anchors = boxes(1, 10)
mb_labels = np.concatenate([rng.integers(0, 3, (2, 3, 1)), boxes(2, 3)], axis=-1).astype(np.float32)
mb_labels[1, 2] = -1
mb_preds = rng.normal(0, 1, (2, 4, 10)).astype(np.float32)
record("target", "MultiBoxTarget", [mb_anchors, mb_labels, mb_preds], dict(overlap_threshold=0.3))
record("target_mining", "MultiBoxTarget", [mb_anchors, mb_labels, mb_preds],
       dict(overlap_threshold=0.4, negative_mining_ratio=2, negative_mining_thresh=0.5, ignore_label=-2))
np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
