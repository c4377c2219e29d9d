"""``random_pdf_*`` against MXNet 1.9.1 (fixtures_pdf/make_fixtures.py records them), their shape and
type rules, and the nd/sym faces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError

CASES = load_cases(Path(__file__).parent / "fixtures_pdf" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs, heads = numbered(a, "in"), numbered(a, "head")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    # float64: MXNet's digamma is off by ~1e-7 (ours by ~1e-10, against central differences of math.lgamma)
    tol = dict(rtol=1e-4, atol=1e-5) if inputs[0].dtype == np.float32 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0], a["out0"], **tol, err_msg=case)
    grads = backward(spec["op"], spec["params"], inputs, outs, heads)
    for i in spec["grads"]:
        np.testing.assert_allclose(grads[i], a[f"grad{i}"], **tol, err_msg=f"{case}: grad of input {i}")


@pytest.mark.parametrize("op,shapes,out", [
    ("_random_pdf_normal", [(2, 3, 4), (2,), (2,)], (2, 3, 4)),
    ("_random_pdf_normal", [(2, 3), (2, 3), (2, 3)], (2, 3)),
    ("_random_pdf_exponential", [(5,), ()], (5,)),
    ("_random_pdf_dirichlet", [(2, 5, 3), (2, 3)], (2, 5)),
    ("_random_pdf_dirichlet", [(2, 3), (3,)], (2,)),
    ("_random_pdf_dirichlet", [(3,), (3,)], (1,)),  # MXNet 1.x has no 0-d arrays
])
def test_shapes(op, shapes, out):
    assert prepare(op, {}).infer_shape(shapes)[1] == [out]


@pytest.mark.parametrize("op,shapes,msg", [
    ("_random_pdf_normal", [(2, 3), (3,), (3,)], r"sample has shape \(2, 3\) but parameters of shape \(3,\)"),
    ("_random_pdf_normal", [(2,), (2, 3), (2, 3)], "sample has shape"),
    ("_random_pdf_normal", [(2, 3), (2,), (3,)], r"mu \(2,\), sigma \(3,\)"),
    ("_random_pdf_dirichlet", [(2, 4), (2, 3)], r"need \(2,\) \+ extra \+ \(3,\)"),
])
def test_shape_errors_name_the_op_and_shapes(op, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prepare(op, {}).infer_shape(shapes)


def test_types():
    prop = prepare("_random_pdf_gamma", {})
    assert prop.infer_type([np.float16, None, None])[1] == [np.float16]
    with pytest.raises(MXAsyncError, match="floating point"):
        prop.infer_type([np.int32] * 3)
    with pytest.raises(MXAsyncError, match="alpha float32"):
        prop.infer_type([np.float64, np.float32, np.float32])


def test_float16_close_to_float64():
    x, mu, s = np.array([[0.1, 0.5, -1.0]]), np.array([0.2]), np.array([0.9])
    want = mx.nd.random_pdf_normal(mx.nd.array(x, dtype="float64"), mx.nd.array(mu, dtype="float64"),
                                   mx.nd.array(s, dtype="float64")).asnumpy()
    got = mx.nd.random_pdf_normal(*[mx.nd.array(v, dtype="float16") for v in (x, mu, s)])
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.asnumpy(), want, rtol=5e-3)


def test_nd_and_sym_faces_agree():
    sample, lam = np.array([[0.0, 1.0, 3.0]]), np.array([2.0])
    direct = mx.nd.random_pdf_poisson(mx.nd.array(sample), mx.nd.array(lam), is_log=True).asnumpy()
    np.testing.assert_array_equal(mx.nd.random.pdf_poisson(mx.nd.array(sample), mx.nd.array(lam), is_log=True)
                                  .asnumpy(), direct)
    s = mx.sym.random_pdf_poisson(mx.sym.Variable("s"), mx.sym.Variable("lam"), is_log=True)
    assert s.list_arguments() == ["s", "lam"]
    assert s.infer_shape(s=(1, 3), lam=(1,))[1] == [(1, 3)]
    exe = s.bind(mx.cpu(), {"s": mx.nd.array(sample), "lam": mx.nd.array(lam)},
                 args_grad={"s": mx.nd.zeros((1, 3)), "lam": mx.nd.zeros((1,))})
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), direct, rtol=1e-6)
    exe.backward(mx.nd.ones((1, 3)))
    np.testing.assert_allclose(exe.grad_dict["lam"].asnumpy(), [(0 + 1 + 3) / 2 - 3], rtol=1e-6)
    np.testing.assert_array_equal(exe.grad_dict["s"].asnumpy(), 0)  # discrete: no gradient to the sample
    assert mx.sym.random.pdf_dirichlet(mx.sym.Variable("x"), mx.sym.Variable("a")).infer_shape(
        x=(4, 2), a=(2,))[1] == [(4,)]
    assert mx.sym.load_json(s.tojson()).tojson() == s.tojson()
