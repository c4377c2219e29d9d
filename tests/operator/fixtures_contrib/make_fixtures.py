"""Record MXNet 1.9.1's small contrib ops and softmax_cross_entropy. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_contrib/make_fixtures.py

Each case runs one op under ``mx.autograd`` with a random head gradient and stores the inputs
``in0``..., outputs ``out0``..., heads ``head0``... and the gradients ``grad0``... of the inputs
listed in ``<case>/spec`` (a JSON string: op as registered, params, grads), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def record(case, op, fn, inputs, params, grads=(0,)):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grads:
        xs[i].attach_grad()
    with mx.autograd.record():
        out = fn(*xs, **params)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape), dtype=o.dtype) for o in outs]
    if grads:
        mx.autograd.backward(outs, heads)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h.asnumpy()
    for i in grads:
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params, grads=list(grads))))


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


c = mx.nd.contrib
record("sce", "softmax_cross_entropy", mx.nd.softmax_cross_entropy,
       [rand(4, 5), np.array([0, 3, 4, 1], np.float32)], {})
record("quadratic", "_contrib_quadratic", c.quadratic, [rand(2, 3)], dict(a=0.5, b=-2.0, c=1.5))
record("div_sqrt_dim", "_contrib_div_sqrt_dim", c.div_sqrt_dim, [rand(2, 3, 9)], {})
halves = np.array([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 0.3, -0.7]], np.float32)
record("round_ste", "_contrib_round_ste", c.round_ste, [halves], {})
record("sign_ste", "_contrib_sign_ste", c.sign_ste, [np.array([[-2.0, 0.0, 3.0]], np.float32)], {})
record("gradmult", "_contrib_gradientmultiplier", c.gradientmultiplier, [rand(3, 2)], dict(scalar=-0.5))
record("arange_like", "_contrib_arange_like", c.arange_like, [rand(2, 3)], dict(start=1.0, step=0.5), grads=())
record("arange_like_axis", "_contrib_arange_like", c.arange_like, [rand(2, 7)], dict(axis=-1, start=2.0),
       grads=())
record("arange_like_repeat", "_contrib_arange_like", c.arange_like, [rand(3, 4)], dict(repeat=3, step=2.0),
       grads=())
record("index_array", "_contrib_index_array", c.index_array, [rand(2, 3)], {}, grads=())
record("index_array_axes", "_contrib_index_array", c.index_array, [rand(2, 3, 4)], dict(axes=(-1, 0)), grads=())
record("index_copy", "_contrib_index_copy", c.index_copy,
       [rand(5, 3), np.array([3, 0], np.int64), rand(2, 3)], {}, grads=(0, 2))
close = np.array([1.0, 2.0, np.nan], np.float32)
record("allclose_true", "_contrib_allclose", c.allclose, [close, close + 1e-7], {}, grads=())
record("allclose_false", "_contrib_allclose", c.allclose, [close, close + 1e-3], {}, grads=())
record("allclose_nan", "_contrib_allclose", c.allclose, [close, close], dict(equal_nan=False), grads=())
np.savez(HERE / "mxnet_ref.npz", **store)
