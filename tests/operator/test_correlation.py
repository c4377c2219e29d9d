"""Correlation against MXNet 1.9.1 (fixtures_correlation/make_fixtures.py records them), its shape
rule and errors, and the nd/sym faces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError

CASES = load_cases(Path(__file__).parent / "fixtures_correlation" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs = numbered(a, "in")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    np.testing.assert_allclose(outs[0], a["out0"], rtol=1e-4, atol=1e-5, err_msg=case)
    grads = backward(spec["op"], spec["params"], inputs, outs, [a["head0"]])
    for i in spec["grads"]:
        np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=1e-4, atol=1e-5, err_msg=f"{case}: grad {i}")


@pytest.mark.parametrize("params,out", [
    ({}, (2, 9, 5, 6)),
    (dict(kernel_size=3, max_displacement=2, stride1=2, pad_size=2), (2, 25, 3, 3)),
    (dict(max_displacement=3, stride2=2, pad_size=3), (2, 9, 7, 8)),
])
def test_shapes_as_mxnet(params, out):  # the shapes MXNet 1.9.1 infers for (2, 3, 7, 8) inputs
    s = mx.sym.Correlation(mx.sym.Variable("a"), mx.sym.Variable("b"), **params)
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3, 7, 8))[1] == [out]


@pytest.mark.parametrize("params,shapes,msg", [
    (dict(kernel_size=2), [(1, 1, 5, 5)] * 2, "kernel_size=2; it must be odd"),
    (dict(max_displacement=3), [(1, 1, 5, 6)] * 2, "too small for max_displacement=3"),
    ({}, [(1, 1, 5, 6), (1, 1, 5, 5)], r"data1 \(1, 1, 5, 6\) and data2 \(1, 1, 5, 5\)"),
    ({}, [(1, 5, 6), None], r"data1 has shape \(1, 5, 6\)"),
])
def test_errors(params, shapes, msg):
    with pytest.raises(MXAsyncError, match=f"Correlation.*{msg}"):
        prepare("Correlation", params).infer_shape(shapes)


def test_autograd_and_identical_inputs():
    x = mx.nd.array(np.random.default_rng(0).standard_normal((1, 2, 4, 4)))
    a, b = x.copy(), x.copy()
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Correlation(a, b, max_displacement=0)
    # zero offset only: the mean over channels of x * x
    np.testing.assert_allclose(y.asnumpy()[:, 0], (x.asnumpy() ** 2).mean(axis=1), rtol=1e-5)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), x.asnumpy() / 2, rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), x.asnumpy() / 2, rtol=1e-5)
