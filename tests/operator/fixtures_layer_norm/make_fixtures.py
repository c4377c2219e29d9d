"""Record LayerNorm / GroupNorm cases with MXNet 1.9.1 for ``tests/operator/test_layer_norm.py``. Run by hand:

    /work/mxref/bin/python tests/operator/fixtures_layer_norm/make_fixtures.py

Each case stores inputs ``in0..2``, outputs ``out0..``, head gradients ``head0..`` and the input
gradients ``grad0..2`` from ``mx.autograd`` plus a ``spec`` JSON (op, params) in ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(1913)
store: dict[str, np.ndarray] = {}


def record(case: str, op: str, data_shape: tuple, param_shape: tuple, params: dict) -> None:
    arrays = [rng.standard_normal(data_shape).astype(np.float32),
              rng.uniform(0.5, 1.5, param_shape).astype(np.float32),
              rng.standard_normal(param_shape).astype(np.float32)]
    xs = [mx.nd.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        res = getattr(mx.nd, op)(*xs, **params)
        outs = list(res) if isinstance(res, (list, tuple)) else [res]
        heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape).astype(np.float32)) for o in outs]
    mx.autograd.backward(outs, heads)
    for i, a in enumerate(arrays):
        store[f"{case}/in{i}"] = a
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params)))


record("ln_last", "LayerNorm", (3, 4, 5), (5,), {})
record("ln_axis1", "LayerNorm", (2, 3, 4), (3,), dict(axis=1, eps=1e-3))
record("ln_axis0_meanvar", "LayerNorm", (4, 3), (4,), dict(axis=0, output_mean_var=True))
record("gn_1", "GroupNorm", (2, 4, 3), (1,), {})
record("gn_2", "GroupNorm", (2, 4, 2, 3), (2,), dict(num_groups=2, eps=1e-3))
record("gn_4_meanvar", "GroupNorm", (3, 4, 5), (4,), dict(num_groups=4, output_mean_var=True))
np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
