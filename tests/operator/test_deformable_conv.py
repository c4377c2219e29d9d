"""Deformable convolutions against MXNet 1.9.1 (fixtures_deformable/, made by its make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

FIXTURE = Path(__file__).parent / "fixtures_deformable" / "mxnet_ref.npz"
with np.load(FIXTURE) as _z:
    CASES = {n: {k.split("/", 1)[1]: _z[k] for k in _z.files if k.startswith(n + "/")}
             for n in sorted({k.split("/")[0] for k in _z.files})}


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_gradients_match_mxnet(case):
    a = CASES[case]
    spec = json.loads(str(a["spec"]))
    names = spec["names"]
    sym = getattr(mx.sym._internal if spec["op"].startswith("_") else mx.sym, spec["op"])(*[mx.sym.var(n) for n in names], **spec["params"])
    args = {n: mx.nd.array(a[f"in{i}"], dtype=np.float64) for i, n in enumerate(names)}
    grads = {n: mx.nd.zeros(a[f"in{i}"].shape, dtype=np.float64) for i, n in enumerate(names)}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), a["out"], rtol=1e-6, atol=1e-8)
    ex.backward(mx.nd.array(a["head"], dtype=np.float64))
    for i, n in enumerate(names):
        if f"grad{i}" not in a:
            continue  # MXNet records no gradient (GPU-only there)
        np.testing.assert_allclose(grads[n].asnumpy(), a[f"grad{i}"], rtol=1e-6, atol=1e-8, err_msg=f"{case}: {n}")


def test_zero_offsets_and_unit_mask_are_plain_convolution():
    rng = np.random.default_rng(0)
    x, w, b = (mx.nd.array(rng.normal(size=s)) for s in ((2, 4, 6, 5), (6, 2, 3, 3), (6,)))
    conv = dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2)
    expected = mx.nd.Convolution(x, w, b, **conv).asnumpy()
    plain = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((2, 36, 6, 5)), w, b, num_deformable_group=2, **conv)
    modulated = mx.nd.contrib.ModulatedDeformableConvolution(x, mx.nd.zeros((2, 18, 6, 5)), mx.nd.ones((2, 9, 6, 5)),
                                                             w, b, **conv)
    np.testing.assert_allclose(plain.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(modulated.asnumpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op, n_in", [("_contrib_DeformableConvolution", 4),
                                      ("_contrib_ModulatedDeformableConvolution", 5)])
def test_gradients_match_central_differences(op, n_in):
    from harness import GRAD_TOL, backward, forward, numeric_grad

    rng = np.random.default_rng(3)
    shapes = [(1, 2, 4, 4), (1, 18, 4, 4)] + ([(1, 9, 4, 4)] if n_in == 5 else []) + [(3, 2, 3, 3), (3,)]
    inputs = [rng.normal(size=s) for s in shapes]
    inputs[1] = rng.uniform(0.2, 0.8, shapes[1])  # sample points away from pixel borders
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=3)
    outs = forward(op, params, [x.copy() for x in inputs], is_train=True)
    head = [rng.uniform(0.5, 1.5, outs[0].shape)]
    grads = backward(op, params, inputs, outs, head)
    num = numeric_grad(op, params, inputs, head)
    for i in range(n_in):
        np.testing.assert_allclose(grads[i], num[i], **GRAD_TOL, err_msg=f"{op}: input {i}")
