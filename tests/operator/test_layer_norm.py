"""LayerNorm and GroupNorm against MXNet 1.9.1 (``fixtures_layer_norm/make_fixtures.py``), their front ends
and their shape errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.operator import get_op

CASES = load_cases(Path(__file__).parent / "fixtures_layer_norm" / "mxnet_ref.npz")
RTOL, ATOL = 1e-4, 1e-5


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs, heads = numbered(a, "in"), numbered(a, "head")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    expected = numbered(a, "out")
    for o, e in zip(outs, expected, strict=False):
        assert o.shape == e.shape and o.dtype == e.dtype, case
        np.testing.assert_allclose(o, e, rtol=RTOL, atol=ATOL, err_msg=case)
    heads = heads + [np.zeros_like(o) for o in outs[len(heads):]]
    grads = backward(spec["op"], spec["params"], inputs, outs, heads)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, a[f"grad{i}"], rtol=RTOL, atol=ATOL, err_msg=f"{case}: grad {i}")


def test_symbol_names_and_shapes():
    s = mx.sym.LayerNorm(mx.sym.Variable("data"), axis=1, output_mean_var=True, name="ln")
    assert s.list_arguments() == ["data", "ln_gamma", "ln_beta"]
    assert s.list_outputs() == ["ln_output", "ln_mean", "ln_std"]
    assert s.infer_shape(data=(2, 4, 3))[1] == [(2, 4, 3), (2, 1, 3), (2, 1, 3)]
    g = mx.sym.GroupNorm(mx.sym.Variable("data"), num_groups=2, name="gn")
    assert g.list_outputs() == ["gn_output"]
    assert g.infer_shape(data=(2, 4, 3))[0] == [(2, 4, 3), (2,), (2,)]


def test_nd_autograd_matches_formula():
    x = mx.nd.array(np.arange(10, dtype=np.float32).reshape(2, 5))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LayerNorm(x, mx.nd.ones(5), mx.nd.zeros(5))
    y.backward()
    np.testing.assert_allclose(y.asnumpy()[0], [-1.41421, -0.707105, 0, 0.707105, 1.41421], atol=1e-4)
    np.testing.assert_allclose(x.grad.asnumpy(), 0, atol=1e-5)  # a normalised sum has no gradient


@pytest.mark.parametrize("op,params,shapes,msg", [
    ("LayerNorm", dict(axis=3), [(2, 3, 4), None, None], r"LayerNorm: axis=3 is out of range .*\(2, 3, 4\)"),
    ("LayerNorm", {}, [(2, 3, 4), (3,), None], r"LayerNorm: gamma has shape \(3,\) but data \(2, 3, 4\) needs \(4,\)"),
    ("GroupNorm", dict(num_groups=3), [(2, 4, 3), None, None], r"GroupNorm: .*C divisible by num_groups=3"),
    ("GroupNorm", dict(num_groups=2), [(2, 4, 3), None, (4,)], r"GroupNorm: beta has shape \(4,\) .*needs \(2,\)"),
])
def test_shape_errors(op, params, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        get_op(op).prepare(**params).infer_shape(shapes)
