"""Record MXNet 1.9.1's LARS optimizer (tests/optimizer/test_lars.py): three steps through an Updater on a
weight, a bias (no LARS scaling, no weight decay) and a second weight, given one index at a time and as
lists (MXNet's fused multi_lars path), with momentum correction under a FactorScheduler, and float16
weights under multi_precision. By hand only:

    /work/venvs/mx191/bin/python tests/optimizer/fixtures_lars/make_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}
NAMES = {0: "fc1_weight", 1: "fc1_bias", 2: "fc2_weight"}
SHAPES = [(4, 3), (4,), (2, 4)]


def run(case, dtype, fused, **kwargs):
    w0 = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES]
    grads = [[rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES] for _ in range(3)]
    opt = mx.optimizer.LARS(learning_rate=0.2, wd=0.01, rescale_grad=0.5, eta=0.3, eps=1e-3,
                            param_idx2name=dict(NAMES), lr_scheduler=mx.lr_scheduler.FactorScheduler(1, 0.5),
                            **kwargs)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w, dtype=dtype) for w in w0]
    for step, gs in enumerate(grads):
        g_nd = [mx.nd.array(g, dtype=dtype) for g in gs]
        if fused:
            upd([0, 1, 2], g_nd, ws)
        else:
            for i in range(3):
                upd(i, g_nd[i], ws[i])
        for i, g in enumerate(gs):
            store[f"{case}/grad{step}_{i}"] = g
    for i in range(3):
        store[f"{case}/w0_{i}"] = w0[i]
        store[f"{case}/w_{i}"] = ws[i].asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(dtype=np.dtype(dtype).name, fused=fused, kwargs=kwargs)))


run("single_mom", np.float32, False, momentum=0.9)
run("fused_mom", np.float32, True, momentum=0.9)
run("fused_plain", np.float32, True)
run("single_nocorrection", np.float32, False, momentum=0.8, momentum_correction=False)
run("fused_mp", np.float16, True, momentum=0.9, multi_precision=True)

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
