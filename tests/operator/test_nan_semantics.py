"""NaN in max Pooling and Activation(relu), against MXNet 1.9.1 (``fixtures_nan/make_fixtures.py``).

MXNet's max pooling skips NaNs (a window of NaNs only gives the lowest finite value) and its CPU
``Activation(act_type="relu")`` turns NaN into 0 in float32; networks whose BatchNorm sees a negative
``moving_var`` (GluonCV's SSD-512 under a uniform initializer) depend on both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

FIXTURE = Path(__file__).parent / "fixtures_nan" / "mxnet_ref.npz"
POOL = {
    "pool2d_2x2": dict(kernel=(2, 2), stride=(2, 2)),
    "pool2d_3x3_pad": dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    "pool2d_full": dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
    "pool2d_global": dict(kernel=(1, 1), global_pool=True),
    "pool1d": dict(kernel=(3,), stride=(2,)),
    "pool3d": dict(kernel=(2, 2, 2), stride=(2, 2, 2)),
    "pool2d_f64": dict(kernel=(2, 2), stride=(2, 2)),
    "pool2d_f16": dict(kernel=(2, 2), stride=(2, 2)),
}


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("case", sorted(POOL))
def test_max_pooling_skips_nan(ref, case):
    x = ref[f"{case}/x"]
    got = mx.nd.Pooling(mx.nd.array(x, dtype=x.dtype), pool_type="max", **POOL[case]).asnumpy()
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, ref[f"{case}/out"])
    assert not np.isnan(got).any()


def test_max_pooling_backward_skips_nan():
    x = mx.nd.array([[[[np.nan, 1.0], [3.0, np.nan]]]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=(2, 2), pool_type="max")
    y.backward()
    assert y.asnumpy().ravel().tolist() == [3.0]
    assert x.grad.asnumpy().ravel().tolist() == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("case", ["relu_f16", "relu_f32", "relu_f64"])
def test_activation_relu_nan(ref, case):
    x = ref[f"{case}/x"]
    data = mx.nd.array(x, dtype=x.dtype)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Activation(data, act_type="relu")
    y.backward(mx.nd.ones_like(y))
    np.testing.assert_array_equal(y.asnumpy(), ref[f"{case}/out"])
    np.testing.assert_array_equal(data.grad.asnumpy(), ref[f"{case}/grad"])  # NaN in float16/64
    sym = mx.sym.Activation(mx.sym.var("d"), act_type="relu")
    np.testing.assert_array_equal(sym.eval(d=mx.nd.array(x, dtype=x.dtype))[0].asnumpy(), ref[f"{case}/out"])


def test_relu_op_keeps_nan():
    # the plain relu op keeps NaN in MXNet 1.9.1 whatever the dtype; only Activation's float32 kernel differs
    assert np.isnan(mx.nd.relu(mx.nd.array([np.nan, 1.0])).asnumpy()[0])
