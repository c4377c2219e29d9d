"""softmax(data, length, use_length=True): MXNet 1.9.1's masked softmax.

The expected values were printed by the real MXNet 1.9.1 (mx.nd.softmax and mx.autograd)
for these inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.registry import get_op

X = np.arange(12, dtype=np.float64).reshape(3, 4) / 4
LENGTH = np.array([1, 2, 4], np.int32)
MXNET_OUT = [[1.0, 0.0, 0.0, 0.0], [0.4378235, 0.5621765, 0.0, 0.0],
             [0.16529618, 0.2122445, 0.27252734, 0.34993201]]
# gradient of sum(softmax(X, LENGTH) * arange(12).reshape(3, 4)) w.r.t. X
MXNET_GRAD = [[0.0, 0.0, 0.0, 0.0], [-0.24613418, 0.24613398, 0.0, 0.0],
              [-0.298706, -0.17130159, 0.05257174, 0.41743547]]


def test_forward_matches_mxnet_on_both_axes():
    out = mx.nd.softmax(mx.nd.array(X), mx.nd.array(LENGTH, dtype="int32"), axis=1, use_length=True)
    np.testing.assert_allclose(out.asnumpy(), MXNET_OUT, rtol=1e-5, atol=1e-7)
    x0 = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    out0 = mx.nd.softmax(mx.nd.array(x0), mx.nd.array([2, 3, 1], dtype="int32"), axis=0, use_length=True)
    np.testing.assert_allclose(out0.asnumpy(), [[0.3208213, 0.13160165, 1.0], [0.6791787, 0.2786007, 0.0],
                                                [0.0, 0.5897977, 0.0], [0.0, 0.0, 0.0]], rtol=1e-5, atol=1e-7)


def _loss(x, weights):
    op = get_op("softmax").prepare(axis=1, use_length=True)
    fwd = op.forward_fn(mx.cpu())
    from mxasync.operator import OpContext
    from mxasync.operator.base import WRITE_TO

    out = np.empty_like(x)
    fwd(OpContext(True, None, []), [x, LENGTH], [WRITE_TO], [out], [])
    return (out * weights).sum(), out


def test_gradient_matches_mxnet_and_finite_differences():
    from mxasync.operator import OpContext
    from mxasync.operator.base import WRITE_TO

    weights = np.arange(12, dtype=np.float64).reshape(3, 4)
    _, out = _loss(X, weights)
    op = get_op("softmax").prepare(axis=1, use_length=True)
    grad = np.zeros_like(X)
    lgrad = np.ones(3, np.int32)
    op.backward_fn(mx.cpu())(OpContext(True, None, []), [weights], [X, LENGTH], [out], [WRITE_TO, WRITE_TO],
                             [grad, lgrad], [])
    np.testing.assert_allclose(grad, MXNET_GRAD, rtol=1e-5, atol=1e-6)
    assert lgrad.tolist() == [0, 0, 0]  # the integer length gets no gradient
    eps, numeric = 1e-6, np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        hi, lo = X.copy(), X.copy()
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = (_loss(hi, weights)[0] - _loss(lo, weights)[0]) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_temperature_symbol_and_errors():
    out = mx.nd.softmax(mx.nd.array(X), mx.nd.array(LENGTH, dtype="int32"), axis=1, use_length=True,
                        temperature=2.0)
    np.testing.assert_allclose(out.asnumpy()[1], [0.46879065, 0.5312094, 0, 0], rtol=1e-5)
    sym = mx.sym.softmax(mx.sym.Variable("d"), mx.sym.Variable("l"), axis=1, use_length=True)
    assert sym.list_arguments() == ["d", "l"]
    assert sym.infer_shape(d=(3, 4))[0] == [(3, 4), (3,)]
    with pytest.raises(mx.MXNetError, match="softmax: length must be an integer array, got float32"):
        mx.nd.softmax(mx.nd.array(X), mx.nd.array(LENGTH), axis=1, use_length=True)
    with pytest.raises(mx.MXNetError, match=r"length has shape \(4,\) but data \(3, 4\) with axis=1 needs \(3,\)"):
        mx.nd.softmax(mx.nd.array(X), mx.nd.array([1, 2, 3, 4], dtype="int32"), axis=1, use_length=True)
    with pytest.raises(mx.MXNetError, match="log_softmax: use_length=True is not supported"):
        mx.nd.log_softmax(mx.nd.array(X), use_length=True)
