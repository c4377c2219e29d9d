"""Record MXNet 1.9.1's ``random_pdf_*`` densities and their gradients. By hand only:

    /work/mxref/bin/python tests/operator/fixtures_pdf/make_fixtures.py

Each case runs one op under ``mx.autograd`` (float64) with a random head gradient and stores
the inputs ``in0``..., the output ``out0``, the head ``head0`` and the gradients ``grad0``... of
every input (``<case>/spec``: a JSON string with the op and its params), into ``mxnet_ref.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261123)
store: dict[str, np.ndarray] = {}


def record(case, dist, inputs, is_log):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, f"random_pdf_{dist}")(*xs, is_log=is_log)
    head = rng.uniform(0.5, 1.5, out.shape)
    out.backward(mx.nd.array(head, dtype=out.dtype))
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/out0"] = out.asnumpy()
    store[f"{case}/head0"] = head.astype(out.dtype)
    spec = dict(op=f"_random_pdf_{dist}", params=dict(is_log=is_log), grads=list(range(len(inputs))))
    store[f"{case}/spec"] = np.array(json.dumps(spec))


def u(lo, hi, *shape):
    return rng.uniform(lo, hi, shape)


S, EXTRA = (2, 3), (4,)
x = S + EXTRA
CASES = {
    "uniform": lambda: [u(-1, 2, *x), u(-2, -1, *S), u(2, 3, *S)],
    "normal": lambda: [u(-2, 2, *x), u(-1, 1, *S), u(0.5, 2, *S)],
    "gamma": lambda: [u(0.1, 3, *x), u(0.5, 3, *S), u(0.5, 2, *S)],
    "exponential": lambda: [u(0.1, 3, *x), u(0.5, 3, *S)],
    "poisson": lambda: [rng.integers(0, 6, x).astype(np.float64), u(0.5, 4, *S)],
    "negative_binomial": lambda: [rng.integers(0, 6, x).astype(np.float64), u(0.5, 4, *S), u(0.2, 0.8, *S)],
    "generalized_negative_binomial": lambda: [rng.integers(0, 6, x).astype(np.float64), u(0.5, 4, *S),
                                              u(0.2, 1.5, *S)],
    "dirichlet": lambda: [rng.dirichlet([1.0, 2.0, 1.5], S + EXTRA), u(0.5, 3, *S, 3)],
}
for dist, make in CASES.items():
    inputs = make()
    for is_log in (False, True):
        record(f"{dist}_{'log' if is_log else 'pdf'}", dist, inputs, is_log)
# parameters of the same shape as the sample (no extra axes), and float32
record("normal_noextra", "normal", [u(-2, 2, 3, 2), u(-1, 1, 3, 2), u(0.5, 2, 3, 2)], False)
record("gamma_f32", "gamma", [a.astype(np.float32) for a in CASES["gamma"]()], True)
record("dirichlet_flat", "dirichlet", [rng.dirichlet([2.0, 1.0], (5,)), u(0.5, 3, 2)], True)
np.savez(HERE / "mxnet_ref.npz", **store)
