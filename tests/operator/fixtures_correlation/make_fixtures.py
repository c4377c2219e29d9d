"""Record MXNet 1.9.1's ``Correlation`` outputs and gradients. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_correlation/make_fixtures.py

Each case runs the op under ``mx.autograd`` (float32) with a random head gradient and stores the
inputs ``in0``/``in1``, the output ``out0``, the head ``head0`` and the gradients ``grad0``/``grad1``
(``<case>/spec``: a JSON string with the op and its params), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def record(case, shape, params):
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    xs = [mx.nd.array(x) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Correlation(*xs, **params)
    head = rng.uniform(0.5, 1.5, out.shape).astype(np.float32)
    out.backward(mx.nd.array(head))
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/out0"] = out.asnumpy()
    store[f"{case}/head0"] = head
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="Correlation", params=params, grads=[0, 1])))


record("default", (2, 3, 6, 7), {})
record("pad_k3", (1, 2, 7, 8), dict(kernel_size=3, max_displacement=2, stride1=1, stride2=1, pad_size=2))
record("strides", (2, 2, 9, 10), dict(kernel_size=3, max_displacement=4, stride1=2, stride2=2, pad_size=4))
record("abs", (1, 3, 6, 6), dict(kernel_size=1, max_displacement=2, pad_size=1, is_multiply=False))
record("abs_k3_s2", (1, 2, 8, 7), dict(kernel_size=3, max_displacement=2, stride1=2, stride2=1, pad_size=3,
                                       is_multiply=False))
record("flownet_like", (1, 4, 8, 8), dict(kernel_size=1, max_displacement=4, stride1=1, stride2=2, pad_size=4))
np.savez(HERE / "mxnet_ref.npz", **store)
