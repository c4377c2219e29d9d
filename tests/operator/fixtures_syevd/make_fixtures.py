"""Record MXNet 1.9.1's ``linalg.syevd`` and ``linalg.potrf`` / ``linalg.potri`` with ``lower=False``
(outputs and autograd gradients, float64) for tests/operator/test_syevd.py. By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_syevd/make_fixtures.py

Inputs are symmetric (syevd, potrf) or triangular (potri), the matrices these ops are meant for.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def record(case, op, a, params):
    x = mx.nd.array(a, dtype=a.dtype)
    x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd.linalg, op)(x, **params)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [rng.uniform(0.5, 1.5, o.shape).astype(a.dtype) for o in outs]
    mx.autograd.backward(outs, [mx.nd.array(h, dtype=a.dtype) for h in heads])
    store[f"{case}/in0"] = a
    store[f"{case}/grad0"] = x.grad.asnumpy()
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params)))


def sym(*shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def spd(*shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


record("syevd_one", "syevd", sym(4, 4), {})
record("syevd_batch", "syevd", sym(2, 3, 3, 3), {})
record("syevd_float32", "syevd", sym(3, 3).astype(np.float32), {})
record("potrf_upper", "potrf", spd(2, 3, 3), dict(lower=False))
record("potrf_lower", "potrf", spd(3, 3), dict(lower=True))
record("potri_upper", "potri", np.triu(spd(2, 3, 3)), dict(lower=False))

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
