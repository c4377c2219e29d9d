"""Record MXNet 1.9.1's multi_mp_sgd_*, preloaded_multi_* updates. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_multi_sgd_forms/make_fixtures.py

Per case: the inputs ``in0``... before the call, the outputs ``out0``... (new weights, written to
``out=`` arrays as MXNet's optimizer does) and every input after the call ``after0``... (the states
updated in place), and ``<case>/spec`` (op and params as JSON),
into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}
SHAPES = [(3, 4), (5,), (2, 2, 2)]


def record(case, op, per_weight, params, preloaded=False):
    n = params["num_weights"]
    inputs = []
    for s in SHAPES[:n]:
        start = len(inputs)
        for kind in per_weight:
            if kind == "w32":
                inputs.append(inputs[start].astype(np.float32))  # the master copy of the weight
            else:
                dt = np.float16 if kind in ("w", "g") and "mp" in op else np.float32
                inputs.append(rng.standard_normal(s).astype(dt) * (3 if kind == "g" else 1))
    if preloaded:
        inputs.append(rng.uniform(0.05, 0.5, n).astype(np.float32))
        inputs.append(rng.uniform(0.0, 0.1, n).astype(np.float32))
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    # MXNet's optimizer passes out= (the weights); without it 1.9.1 cannot type the mp outputs
    outs = [mx.nd.zeros(x.shape, dtype=x.dtype) for x in inputs[:len(per_weight) * n:len(per_weight)]]
    getattr(mx.nd, op)(*arrays, out=outs, **params)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/after{i}"] = arrays[i].asnumpy()
    for i, o in enumerate(outs):
        store[f"{case}/out{i}"] = o.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params)))


lrs, wds = (0.1, 0.2, 0.05), (0.01, 0.0, 0.03)
record("mp_sgd", "multi_mp_sgd_update", ("w", "g", "w32"),
       dict(lrs=lrs, wds=wds, rescale_grad=0.5, num_weights=3))
record("mp_sgd_clip", "multi_mp_sgd_update", ("w", "g", "w32"),
       dict(lrs=lrs[:2], wds=wds[:2], clip_gradient=0.5, num_weights=2))
record("mp_sgd_mom", "multi_mp_sgd_mom_update", ("w", "g", "m", "w32"),
       dict(lrs=lrs, wds=wds, momentum=0.9, rescale_grad=0.5, clip_gradient=1.0, num_weights=3))
record("pre_sgd", "preloaded_multi_sgd_update", ("w", "g"), dict(rescale_grad=0.5, num_weights=3), True)
record("pre_sgd_mom", "preloaded_multi_sgd_mom_update", ("w", "g", "m"),
       dict(momentum=0.8, clip_gradient=1.0, num_weights=2), True)
record("pre_mp_sgd", "preloaded_multi_mp_sgd_update", ("w", "g", "w32"), dict(num_weights=3), True)
record("pre_mp_sgd_mom", "preloaded_multi_mp_sgd_mom_update", ("w", "g", "m", "w32"),
       dict(momentum=0.9, rescale_grad=2.0, clip_gradient=0.8, num_weights=3), True)
record("pre_sgd_one", "preloaded_multi_sgd_update", ("w", "g"), dict(num_weights=1), True)
np.savez(HERE / "mxnet_ref.npz", **store)
