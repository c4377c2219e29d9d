"""Record MXNet 1.9.1's ``contrib.boolean_mask`` and ``contrib.index_copy`` (outputs and autograd gradients
of every input) for tests/operator/test_boolean_mask_fft.py. By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_boolean_mask/make_fixtures.py

(count_sketch, fft and ifft run only on GPU in MXNet 1.9.1, so they have no fixtures here.)
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def record(case, op, inputs, params):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd.contrib, op)(*xs, **params)
    head = rng.uniform(0.5, 1.5, out.shape).astype(np.float32)
    out.backward(mx.nd.array(head))
    for i, (x, nx) in enumerate(zip(inputs, xs, strict=True)):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = nx.grad.asnumpy()
    store[f"{case}/out"] = out.asnumpy()
    store[f"{case}/head"] = head
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params)))


f32 = np.float32
record("mask_rows", "boolean_mask", [rng.standard_normal((5, 3)).astype(f32), np.array([1, 0, 1, 1, 0], f32)], {})
record("mask_3d", "boolean_mask", [rng.standard_normal((4, 2, 3)).astype(f32), np.array([0, 2, 0, -1], f32)], {})
record("mask_int_index", "boolean_mask", [rng.standard_normal((3, 4)).astype(f32), np.array([1, 1, 0], np.int32)],
       {})
record("index_copy_dup", "index_copy", [rng.standard_normal((5, 3)).astype(f32), np.array([3, 1, 3], f32),
                                        rng.standard_normal((3, 3)).astype(f32)], {})
record("index_copy_3d", "index_copy", [rng.standard_normal((4, 2, 2)).astype(f32), np.array([0, 2], f32),
                                       rng.standard_normal((2, 2, 2)).astype(f32)], {})

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
