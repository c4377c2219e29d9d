"""batch_take against MXNet 1.9.1 (fixtures from fixtures_batch_take/make_fixtures.py), its types and no-gradient rule."""

import os

import numpy as np
import pytest

import mxasync as mx

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures_batch_take", "batch_take.npz"))


@pytest.mark.parametrize("case", ["case0", "case1"])
def test_matches_mxnet(case):
    out = mx.nd.batch_take(mx.nd.array(FIX[f"{case}/a"]), mx.nd.array(FIX[f"{case}/indices"], dtype="int32"))
    np.testing.assert_array_equal(out.asnumpy(), FIX[f"{case}/out"])


def test_inference_and_errors():
    s = mx.sym.batch_take(mx.sym.Variable("a"), mx.sym.Variable("i"))
    assert s.infer_shape(a=(4, 3)) == ([(4, 3), (4,)], [(4,)], [])
    assert s.infer_type(a=np.float32)[0] == [np.float32, np.int32]
    with pytest.raises(mx.MXNetError, match="int32"):
        mx.nd.batch_take(mx.nd.ones((2, 3)), mx.nd.array([0, 1]))
    with pytest.raises(mx.MXNetError, match="2-D"):
        mx.nd.batch_take(mx.nd.ones((2, 3, 2)), mx.nd.array([0, 1], dtype="int32"))
    # no gradient: binding for one fails; behind stop_gradient it is fine
    y = mx.sym.batch_take(mx.sym.Variable("x"), mx.sym.Variable("idx"))
    kw = dict(x=(3, 4), idx=(3,), type_dict={"x": np.float32, "idx": np.int32})
    exe = mx.sym.stop_gradient(y).simple_bind(mx.cpu(), **kw)
    exe.forward()
    exe.backward()
    with pytest.raises(mx.MXNetError, match="non-differentiable"):
        y.simple_bind(mx.cpu(), **kw)
