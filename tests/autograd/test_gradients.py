"""Gradients of recorded expressions against central differences (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd as ag

RNG = np.random.default_rng(0)


def _numeric(f, arrays, eps=1e-6):
    """Central-difference gradient of scalar ``f(*arrays)`` (numpy float64) for every array."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        it = np.nditer(a, flags=["multi_index"])
        for _ in it:
            i = it.multi_index
            old = a[i]
            a[i] = old + eps
            hi = f(*arrays)
            a[i] = old - eps
            lo = f(*arrays)
            a[i] = old
            g[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def check(fn, *values, rtol=1e-5, atol=1e-7):
    """``fn`` maps NDArrays to an NDArray; compare autograd with central differences of its sum."""
    values = [np.asarray(v, np.float64) for v in values]
    xs = [mx.nd.array(v, dtype=np.float64) for v in values]
    for x in xs:
        x.attach_grad()
    with ag.record():
        y = fn(*xs)
    y.backward()

    def f(*vals):
        return float(fn(*[mx.nd.array(v, dtype=np.float64) for v in vals]).asnumpy().sum())

    expected = _numeric(f, [v.copy() for v in values])
    for x, e in zip(xs, expected, strict=True):
        np.testing.assert_allclose(x.grad.asnumpy(), e, rtol=rtol, atol=atol)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def rnd(*shape):
    return RNG.normal(size=shape)


@pytest.mark.parametrize("name,fn,args", [
    ("arith", lambda a, b: (a + b) * a - b / (a + 3.0), (pos(3, 4), pos(3, 4))),
    ("scalars", lambda a: 2.0 - a * 3.0 + 1.0 / a - a / 4.0, (pos(5),)),
    ("pow", lambda a, b: a ** b + a ** 2.0 + 2.0 ** b, (pos(2, 3), rnd(2, 3))),
    ("exp_log", lambda a: mx.nd.exp(a) * mx.nd.log(a), (pos(4, 2),)),
    ("sum_mean", lambda a: a.sum(axis=1) * a.mean(axis=1) + a.sum(), (rnd(3, 5),)),
    ("broadcast", lambda a, b: a * b + (a - b) / (b * b + 1.0), (rnd(3, 4), rnd(1, 4))),
    ("broadcast_col", lambda a, b: a / b, (rnd(3, 4), pos(3, 1))),
    ("used_twice", lambda a: a * a * a + a, (rnd(2, 2),)),
    ("dot", lambda a, b: mx.nd.dot(a, b), (rnd(3, 4), rnd(4, 2))),
    ("dot_t", lambda a, b: mx.nd.dot(a, b, transpose_b=True), (rnd(3, 4), rnd(2, 4))),
    ("relu_sigmoid", lambda a: mx.nd.relu(a) + mx.nd.sigmoid(a) * mx.nd.tanh(a), (rnd(4, 3) + 0.05,)),
    ("softmax", lambda a, w: mx.nd.softmax(a) * w, (rnd(3, 5), rnd(3, 5))),
    ("slice", lambda a: a[1:3] * a[0:2] + a[2], (rnd(4, 3),)),
    ("slice_cols", lambda a: a[:, 1:] ** 2.0, (rnd(2, 4),)),
    ("reshape", lambda a: a.reshape((6,)) * mx.nd.array(np.arange(6.0), dtype=np.float64), (rnd(2, 3),)),
])
def test_expression_gradients(name, fn, args):
    check(fn, *args)


def test_fully_connected():
    def fc(x, w, b):
        return mx.nd.FullyConnected(x, w, b, num_hidden=3) ** 2.0

    check(fc, rnd(4, 5), rnd(3, 5), rnd(3))


def test_convolution():
    def conv(x, w, b):
        return mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=2, pad=(1, 1)) * 0.5

    check(conv, rnd(2, 3, 5, 5), rnd(2, 3, 3, 3), rnd(2), rtol=1e-4, atol=1e-6)


def test_softmax_cross_entropy_like():
    label = np.eye(4)[[1, 3, 0]]

    def loss(x):
        p = mx.nd.softmax(x)
        return -(mx.nd.log(p) * mx.nd.array(label, dtype=np.float64)).sum()

    check(loss, rnd(3, 4))


def test_float32_default():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = mx.nd.sum(x * x)
    y.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4, 6])


def test_advanced_index_gradient():
    check(lambda a: a[[2, 0, 2, -1]] * 3.0, rnd(4, 3))
    check(lambda a: a[mx.nd.array([1, 1])] ** 2.0, rnd(3, 2))


def test_astype_and_copy_gradients():
    check(lambda a: a.astype("float64") * a.copy(), rnd(3))
    x = mx.nd.array([1.0, 2.0], dtype=np.float64)
    x.attach_grad()
    with ag.record():
        y = (x.astype("float32") * 3).sum()
    y.backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 3])
