"""mx.nd arithmetic and ops against numpy (MXNet's test_ndarray parity cases)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import mxasync as mx

RNG = np.random.default_rng(0)


def _pos(shape):
    return RNG.uniform(0.5, 2.0, shape).astype(np.float32)


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
          operator.eq, operator.ne, operator.gt, operator.ge, operator.lt, operator.le]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
def test_binary_operators_broadcast_like_numpy(op, shapes):
    a, b = _pos(shapes[0]), _pos(shapes[1])
    got = op(mx.nd.array(a), mx.nd.array(b)).asnumpy()
    np.testing.assert_allclose(got, op(a, b).astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", BINARY[:5], ids=lambda f: f.__name__)
def test_scalar_forms_both_sides(op):
    a = _pos((2, 3))
    x = mx.nd.array(a)
    np.testing.assert_allclose(op(x, 1.5).asnumpy(), op(a, np.float32(1.5)), rtol=1e-5)
    np.testing.assert_allclose(op(1.5, x).asnumpy(), op(np.float32(1.5), a), rtol=1e-5)


def test_inplace_operators_write_the_same_array():
    a = _pos((3, 3))
    x = mx.nd.array(a)
    handle = x.handle
    x += 1
    x *= 2
    x -= mx.nd.ones((3, 3))
    x /= 4
    assert x.handle is handle
    np.testing.assert_allclose(x.asnumpy(), ((a + 1) * 2 - 1) / 4, rtol=1e-6)


def test_unary_and_neg():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    x = mx.nd.array(a)
    np.testing.assert_allclose((-x).asnumpy(), -a)
    np.testing.assert_allclose(abs(x).asnumpy(), np.abs(a))
    np.testing.assert_allclose(mx.nd.exp(x).asnumpy(), np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(mx.nd.relu(x).asnumpy(), np.maximum(a, 0))
    np.testing.assert_allclose(mx.nd.sqrt(abs(x)).asnumpy(), np.sqrt(np.abs(a)), rtol=1e-6)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions(name, axis, keepdims):
    a = _pos((3, 4, 2))
    kwargs = {"keepdims": keepdims}
    if axis is not None:
        kwargs["axis"] = axis
    got = getattr(mx.nd, name)(mx.nd.array(a), **kwargs).asnumpy()
    want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got.reshape(np.shape(want)) if np.ndim(want) == 0 else got, want, rtol=1e-5)


def test_dot_batch_dot_and_transpose():
    a, b = _pos((3, 4)), _pos((4, 5))
    np.testing.assert_allclose(mx.nd.dot(mx.nd.array(a), mx.nd.array(b)).asnumpy(), a @ b, rtol=1e-5)
    np.testing.assert_allclose(mx.nd.dot(mx.nd.array(b), mx.nd.array(a), transpose_a=True, transpose_b=True)
                               .asnumpy(), b.T @ a.T, rtol=1e-5)
    x, y = _pos((2, 3, 4)), _pos((2, 4, 5))
    np.testing.assert_allclose(mx.nd.batch_dot(mx.nd.array(x), mx.nd.array(y)).asnumpy(), x @ y, rtol=1e-5)
    np.testing.assert_array_equal(mx.nd.array(a).T.asnumpy(), a.T)


def test_out_argument_and_generated_signature():
    a = mx.nd.array([1.0, 2.0])
    out = mx.nd.zeros((2,))
    res = mx.nd.elemwise_add(a, a, out=out)
    assert res is out
    np.testing.assert_array_equal(out.asnumpy(), [2, 4])
    assert "lhs" in str(mx.nd.elemwise_add.__signature__)
    assert mx.nd.FullyConnected.__doc__


def test_reshape_special_codes_and_views():
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert x.reshape((0, -1)).shape == (2, 12)
    assert mx.nd.Reshape(x, shape=(-3, 0)).shape == (6, 4)
    assert mx.nd.Reshape(x, shape=(-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    with pytest.raises(mx.MXNetError):
        x.reshape((5, 5))


def test_host_contexts_mix_as_in_mxnet():
    # MXNet 1.9.1: cpu(0) + cpu(1) runs, the result on the first input's context
    a, b = mx.nd.ones((2,), ctx=mx.cpu(0)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 2
    assert (a + b).context == mx.cpu(0) and (b + a).context == mx.cpu(1)
    assert (a + b).asnumpy().tolist() == [3.0, 3.0] and mx.nd.dot(b, a).context == mx.cpu(1)
