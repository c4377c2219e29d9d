"""Record MXNet 1.9.1's ``multi_lars`` (and ``reset_arrays``) results. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_multi_lars/make_fixtures.py

Stores ``<case>/in0``..``in3``, ``<case>/out0`` and ``<case>/spec`` (the params as JSON) into
``mxnet_ref.npz``; zero sums of squares (LARS keeps the rate there) are among the inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def record(case, n, params):
    lrs = rng.uniform(0.01, 0.5, n)
    w = rng.uniform(0, 10, n) * (rng.random(n) > 0.2)
    g = rng.uniform(0, 10, n) * (rng.random(n) > 0.2)
    wds = rng.uniform(0, 0.1, n)
    inputs = [x.astype(np.float32) for x in (lrs, w, g, wds)]
    out = mx.nd.multi_lars(*[mx.nd.array(x) for x in inputs], **params)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    store[f"{case}/out0"] = out.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="multi_lars", params=params)))


record("basic", 12, dict(eta=0.001, eps=1e-8))
record("rescale", 20, dict(eta=0.5, eps=1e-3, rescale_grad=0.25))
# reset_arrays: the arrays after the call (all zero) and what it returns (an empty list)
arrays = [mx.nd.array(rng.standard_normal(s)) for s in [(2, 3), (4,)]]
assert mx.nd.reset_arrays(*arrays, num_arrays=2) == []
for i, a in enumerate(arrays):
    store[f"reset/out{i}"] = a.asnumpy()
store["reset/spec"] = np.array(json.dumps(dict(op="reset_arrays", params=dict(num_arrays=2))))
np.savez(HERE / "mxnet_ref.npz", **store)
