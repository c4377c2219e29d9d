"""Record MXNet 1.9.1's LBSGD optimizer (tests/optimizer/test_lbsgd.py): seven updates of two weights
through an Updater, for each warm-up strategy, batch_scale 1 and 3, with and without momentum, a fresh
gradient array each step (MXNet keeps the first one by reference). By hand only:

    /work/venvs/mx191/bin/python tests/optimizer/fixtures_lbsgd/make_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}
SHAPES = [(3, 4), (5,)]
STEPS = 7


def run(case, **kwargs):
    w0 = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES]
    grads = [[rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    opt = mx.optimizer.LBSGD(learning_rate=0.1, wd=0.01, rescale_grad=0.5, **kwargs)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w) for w in w0]
    for step, gs in enumerate(grads):
        for i, g in enumerate(gs):
            upd(i, mx.nd.array(g), ws[i])
            store[f"{case}/grad{step}_{i}"] = g
    for i in range(len(SHAPES)):
        store[f"{case}/w0_{i}"] = w0[i]
        store[f"{case}/w_{i}"] = ws[i].asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(kwargs))


for strategy in ("linear", "power2", "sqrt", "lars"):
    for scale in (1, 3):
        run(f"{strategy}_s{scale}", warmup_strategy=strategy, batch_scale=scale, warmup_epochs=2,
            updates_per_epoch=2, momentum=0.9)
run("linear_s3_plain_begin", warmup_strategy="linear", batch_scale=3, warmup_epochs=3, updates_per_epoch=2,
    begin_epoch=1)
run("defaults", momentum=0.5)

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
