"""Record MXNet 1.9.1's interleaved_matmul_* attention ops (outputs and gradients). By hand only:

    /work/mxref/bin/python tests/operator/fixtures_interleaved_matmul/make_fixtures.py

Per case ``in0``..., ``out0``, ``head0``, ``grad0``... and ``spec`` (op and params as JSON), into
``mxnet_ref.npz``.
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
    xs = [mx.nd.array(x) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd.contrib, op)(*xs, **params)
    head = mx.nd.array(rng.uniform(0.5, 1.5, out.shape))
    out.backward(head)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/out0"] = out.asnumpy()
    store[f"{case}/head0"] = head.asnumpy()
    spec = dict(op=f"_contrib_{op}", params=params, grads=list(range(len(inputs))))
    store[f"{case}/spec"] = np.array(json.dumps(spec))


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


seq, batch, heads, dim, kseq = 4, 2, 3, 5, 6
record("selfatt_qk", "interleaved_matmul_selfatt_qk", [rand(seq, batch, 3 * heads * dim)], dict(heads=heads))
record("selfatt_valatt", "interleaved_matmul_selfatt_valatt",
       [rand(seq, batch, 3 * heads * dim), rand(batch * heads, seq, seq)], dict(heads=heads))
record("encdec_qk", "interleaved_matmul_encdec_qk", [rand(seq, batch, heads * dim), rand(kseq, batch, 2 * heads * dim)],
       dict(heads=heads))
record("encdec_valatt", "interleaved_matmul_encdec_valatt",
       [rand(kseq, batch, 2 * heads * dim), rand(batch * heads, seq, kseq)], dict(heads=heads))
np.savez(HERE / "mxnet_ref.npz", **store)
