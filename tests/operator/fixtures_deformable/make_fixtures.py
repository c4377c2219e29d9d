"""Record MXNet 1.9.1's DeformableConvolution and ModulatedDeformableConvolution: outputs and the gradients of
every input for a random head gradient (the modulated one's forward only: its backward is GPU-only in 1.9.1;
the op table checks its gradient numerically). By hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_deformable/make_fixtures.py

Per case ``<case>/in<i>``, ``<case>/head``, ``<case>/out``, ``<case>/grad<i>`` and ``<case>/spec`` (op, params,
argument names as JSON), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def record(case, op, arrays, params, grads=True):
    names = list(arrays)
    sym = getattr(mx.sym.contrib, op)(*[mx.sym.var(n) for n in names], **params)
    args = {n: mx.nd.array(a, dtype=np.float64) for n, a in arrays.items()}
    grad_arrays = {n: mx.nd.zeros(a.shape, dtype=np.float64) for n, a in arrays.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grad_arrays)
    out = ex.forward(is_train=True)[0]
    head = rng.uniform(-1, 1, out.shape)
    if grads:  # MXNet 1.9.1 runs ModulatedDeformableConvolution's backward on GPU only
        ex.backward(mx.nd.array(head, dtype=np.float64))
    for i, n in enumerate(names):
        store[f"{case}/in{i}"] = arrays[n]
        if grads:
            store[f"{case}/grad{i}"] = grad_arrays[n].asnumpy()
    store[f"{case}/head"], store[f"{case}/out"] = head, out.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op="_contrib_" + op, params=params, names=names)))


def frac(shape):  # offsets whose sample points sit away from pixel borders
    return rng.integers(-1, 2, shape) + rng.uniform(0.15, 0.85, shape)


n, c, h, w = 2, 4, 6, 5
record("deform", "DeformableConvolution",
       dict(data=rng.normal(size=(n, c, h, w)), offset=frac((n, 2 * 2 * 9, h, w)),
            weight=rng.normal(size=(6, c, 3, 3)), bias=rng.normal(size=6)),
       dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_deformable_group=2))
record("deform_stride_dilate_group", "DeformableConvolution",
       dict(data=rng.normal(size=(n, c, 7, 7)), offset=frac((n, 2 * 4, 4, 4)), weight=rng.normal(size=(4, 2, 2, 2))),
       dict(kernel=(2, 2), stride=(2, 2), dilate=(2, 2), pad=(1, 1), num_filter=4, num_group=2, no_bias=True))
record("modulated", "ModulatedDeformableConvolution",
       dict(data=rng.normal(size=(n, c, h, w)), offset=frac((n, 2 * 2 * 9, h, w)),
            mask=rng.uniform(0.1, 0.9, (n, 2 * 9, h, w)), weight=rng.normal(size=(6, c, 3, 3)),
            bias=rng.normal(size=6)),
       dict(kernel=(3, 3), pad=(2, 2), dilate=(2, 2), num_filter=6, num_deformable_group=2), grads=False)
np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
