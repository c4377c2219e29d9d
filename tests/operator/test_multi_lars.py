"""multi_lars and reset_arrays against MXNet 1.9.1 (fixtures_multi_lars/make_fixtures.py), their
shape rules, errors and front ends."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError

CASES = load_cases(Path(__file__).parent / "fixtures_multi_lars" / "mxnet_ref.npz")


@pytest.mark.parametrize("case", ["basic", "rescale"])
def test_multi_lars_matches_mxnet(case):
    a = CASES[case]
    inputs = numbered(a, "in")
    assert (inputs[1] == 0).any() and (inputs[2] == 0).any()  # the kept-rate branch is exercised
    out = forward("multi_lars", a["spec"]["params"], inputs)[0]
    np.testing.assert_allclose(out, a["out0"], rtol=1e-6, atol=1e-9)
    nd = mx.nd.multi_lars(*[mx.nd.array(x) for x in inputs], **a["spec"]["params"])
    np.testing.assert_allclose(nd.asnumpy(), a["out0"], rtol=1e-6, atol=1e-9)


def test_multi_lars_shapes_errors_and_no_gradient():
    s = mx.sym.multi_lars(*[mx.sym.Variable(n) for n in "abcd"], eta=1, eps=1)
    assert s.list_arguments() == ["a", "b", "c", "d"]
    assert s.infer_shape(a=(4,)) == ([(4,)] * 4, [(4,)], [])
    with pytest.raises(MXAsyncError, match=r"multi_lars: every input must have shape \(4,\); wds has \(3,\)"):
        prepare("multi_lars", dict(eta=1, eps=1)).infer_shape([(4,), None, None, (3,)])
    with pytest.raises(MXAsyncError, match="eta"):
        prepare("multi_lars", dict(eps=1))
    x = [mx.nd.ones((2,)) for _ in range(4)]
    for v in x:
        v.attach_grad()
    with pytest.raises(MXAsyncError, match="non-differentiable"):
        s.simple_bind(mx.cpu(), a=(2,), b=(2,), c=(2,), d=(2,))


def test_reset_arrays_zeroes_in_place_and_returns_nothing():
    want = CASES["reset"]
    arrays = [mx.nd.array(np.full(w.shape, 3.0)) for w in numbered(want, "out")]
    arrays.append(mx.nd.ones((2,), dtype="float16"))
    held = arrays[0][0]  # a view shares the storage: it sees the reset
    assert mx.nd.reset_arrays(*arrays, num_arrays=3) == []
    for a, w in zip(arrays, numbered(want, "out") + [np.zeros(2)], strict=True):
        np.testing.assert_array_equal(a.asnumpy(), w)
    np.testing.assert_array_equal(held.asnumpy(), 0)
    assert arrays[2].dtype == np.float16
    b = mx.nd.ones((3,))
    c = b * 2  # pushed before the reset: reads b's old value
    mx.nd.reset_arrays(b, num_arrays=1)
    np.testing.assert_array_equal(c.asnumpy(), 2)
    np.testing.assert_array_equal((b + 1).asnumpy(), 1)
