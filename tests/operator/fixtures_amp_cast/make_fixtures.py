"""Record MXNet 1.9.1's amp_cast / amp_multicast (values, output dtypes, gradients). By hand only:

    MXNET_MKLDNN_ENABLED=0 /work/mxref/bin/python tests/operator/fixtures_amp_cast/make_fixtures.py

(with MKLDNN on, MXNet 1.9.1 fails on the float64 case: "unknown type for MKLDNN").

Per case ``in0``..., ``out0``..., ``head0``..., ``grad0``... (every input gets a gradient) and ``spec``
(op and params as JSON), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def record(case, op, inputs, params):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, op)(*xs, **params)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape), dtype=o.dtype) for o in outs]
    mx.autograd.backward(outs, heads)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params, grads=list(range(len(inputs))))))


def rand(dtype, *shape):
    return rng.standard_normal(shape).astype(dtype)


record("cast_f32_to_f16", "amp_cast", [rand(np.float32, 2, 3)], dict(dtype="float16"))
record("cast_f16_to_f32", "amp_cast", [rand(np.float16, 4)], dict(dtype="float32"))
record("cast_f64_kept", "amp_cast", [rand(np.float64, 3)], dict(dtype="float16"))
record("multi_widest", "amp_multicast", [rand(np.float16, 3), rand(np.float32, 2, 2)], dict(num_outputs=2))
record("multi_narrow", "amp_multicast", [rand(np.float16, 3), rand(np.float32, 2), rand(np.float64, 2)],
       dict(num_outputs=3, cast_narrow=True))
np.savez(HERE / "mxnet_ref.npz", **store)
