"""softmax_cross_entropy and the small contrib ops (quadratic, div_sqrt_dim, gradientmultiplier, round_ste,
sign_ste, arange_like, index_array, index_copy, allclose) against MXNet 1.9.1
(fixtures_contrib/make_fixtures.py), their errors and front ends."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import NULL, WRITE_TO, backward, forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError

CASES = load_cases(Path(__file__).parent / "fixtures_contrib" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs = numbered(a, "in")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    for o, want in zip(outs, numbered(a, "out"), strict=True):
        assert o.shape == want.shape and o.dtype == want.dtype, case
        np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-6, err_msg=case)
    if spec["grads"]:
        req = [WRITE_TO if i in spec["grads"] else NULL for i in range(len(inputs))]
        grads = backward(spec["op"], spec["params"], inputs, outs, numbered(a, "head"), req=req,
                         grads=[np.zeros(x.shape, np.float32) for x in inputs])
        for i in spec["grads"]:
            np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=1e-5, atol=1e-6, err_msg=f"{case}: grad {i}")


def test_front_ends():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    assert mx.nd.contrib.allclose(x, x + 1e-9).asnumpy() == 1
    assert mx.nd.contrib.allclose(x, x + 1).shape == ()
    np.testing.assert_array_equal(mx.nd.contrib.index_array(x, axes=(1,)).asnumpy()[..., 0], [[0, 1], [0, 1]])
    s = mx.sym.contrib.index_copy(mx.sym.Variable("old"), mx.sym.Variable("idx"), mx.sym.Variable("new"))
    assert s.list_arguments() == ["old", "idx", "new"]
    assert s.infer_shape(old=(5, 3), new=(2, 3)) == ([(5, 3), (2,), (2, 3)], [(5, 3)], [])
    y = mx.sym.softmax_cross_entropy(mx.sym.Variable("d"), mx.sym.Variable("l"))
    assert y.infer_shape(d=(4, 5)) == ([(4, 5), (4,)], [(1,)], [])
    d = mx.nd.array(np.random.default_rng(0).standard_normal((3, 4)))
    d.attach_grad()
    with mx.autograd.record():
        z = mx.nd.contrib.gradientmultiplier(d, scalar=-1.0)
    z.backward()
    np.testing.assert_array_equal(d.grad.asnumpy(), -1)
    label = mx.nd.array([0, 1, 2])
    label.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.softmax_cross_entropy(d, label)
    with pytest.raises(mx.MXNetError, match="gradient with respect to label"):
        loss.backward()
        label.grad.asnumpy()


@pytest.mark.parametrize("op,params,shapes,msg", [
    ("softmax_cross_entropy", {}, [(4, 5), (3,)], r"label has shape \(3,\) but data \(4, 5\) needs \(4,\)"),
    ("softmax_cross_entropy", {}, [(4, 5), (4, 1)], "label has shape .* must be 1-D"),
    ("_contrib_index_copy", {}, [(5, 3), (2,), (2, 4)], "new_tensor .* must have the rows of old_tensor"),
    ("_contrib_index_copy", {}, [(5, 3), (3,), (2, 3)], r"index_vector has shape \(3,\)"),
    ("_contrib_allclose", {}, [(2,), (3,)], r"a \(2,\) and b \(3,\) must have one shape"),
    ("_contrib_arange_like", dict(axis=2), [(2, 3), ], "axis 2 is out of range"),
])
def test_errors(op, params, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prepare(op, params).infer_shape(shapes)


AMP = load_cases(Path(__file__).parent / "fixtures_amp_cast" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(AMP))
def test_amp_casts_match_mxnet(case):
    a = AMP[case]
    spec = a["spec"]
    inputs = numbered(a, "in")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    for o, want in zip(outs, numbered(a, "out"), strict=True):
        assert o.dtype == want.dtype, case
        np.testing.assert_array_equal(o, want, err_msg=case)
    grads = backward(spec["op"], spec["params"], inputs, outs, numbered(a, "head"))
    for i, g in enumerate(grads):
        assert g.dtype == a[f"grad{i}"].dtype
        np.testing.assert_array_equal(g, a[f"grad{i}"], err_msg=f"{case}: grad {i}")


ATTENTION = load_cases(Path(__file__).parent / "fixtures_interleaved_matmul" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(ATTENTION))
def test_interleaved_matmul_matches_mxnet(case):
    a = ATTENTION[case]
    spec = a["spec"]
    inputs = numbered(a, "in")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    np.testing.assert_allclose(outs[0], a["out0"], rtol=1e-5, atol=1e-5, err_msg=case)
    grads = backward(spec["op"], spec["params"], inputs, outs, [a["head0"]])
    for i in spec["grads"]:
        np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=1e-5, atol=1e-5, err_msg=f"{case}: grad {i}")


@pytest.mark.parametrize("op,shapes,msg", [
    ("selfatt_qk", [(4, 2, 16)], r"queries_keys_values has shape \(4, 2, 16\); it must be \(seq, batch, 3 \* heads"),
    ("selfatt_valatt", [(4, 2, 18), (6, 4, 5)], r"attention has shape \(6, 4, 5\) but .* needs \(6, 4, 4\)"),
    ("encdec_qk", [(4, 2, 6), (5, 2, 18)], r"keys_values \(5, 2, 18\) must be \(kseq, 2, 12\)"),
    ("encdec_valatt", [(5, 2, 12), (6, 4, 4)], "attention has shape"),
])
def test_interleaved_matmul_shape_errors(op, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prepare(f"_contrib_interleaved_matmul_{op}", dict(heads=3)).infer_shape(shapes)


LINSPACE = load_cases(Path(__file__).parent / "fixtures_linspace" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(c for c in LINSPACE if not c.startswith("hist")))
def test_linspace_matches_mxnet(case):
    a = LINSPACE[case]
    params = a["spec"]["params"]
    out = mx.sym.linspace(**params).bind(mx.cpu(), {}).forward()[0].asnumpy()
    assert out.dtype == a["out0"].dtype and out.shape == a["out0"].shape
    np.testing.assert_allclose(out, a["out0"], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(mx.nd._internal._linspace(**params).asnumpy(), out)


@pytest.mark.parametrize("case", ["hist_count", "hist_edges"])
def test_histogram_matches_mxnet(case):
    a = LINSPACE[case]
    inputs = numbered(a, "in")
    outs = forward("_histogram", a["spec"]["params"], inputs)
    for o, want in zip(outs, numbered(a, "out"), strict=True):
        assert o.dtype == want.dtype
        np.testing.assert_array_equal(o, want, err_msg=case)
    sym = (mx.sym.histogram(mx.sym.Variable("a"), bins=mx.sym.Variable("b")) if len(inputs) == 2 else
           mx.sym.histogram(mx.sym.Variable("a"), bins=6, range=(0, 3)))
    got = sym.bind(mx.cpu(), {n: mx.nd.array(x) for n, x in zip("ab", inputs, strict=False)}).forward()
    np.testing.assert_array_equal(got[0].asnumpy(), a["out0"])
    with pytest.raises(MXAsyncError, match="range=.* is required"):
        mx.sym.histogram(mx.sym.Variable("a"), bins=3)
