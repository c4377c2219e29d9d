"""Gradients against the ones MXNet 1.9.1 computed (fixtures/make_fixtures.py made the file)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mxasync as mx

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_grads.npz")


# the same expressions as in fixtures/make_fixtures.py
def mlp(x, w1, b1, w2):
    h = mx.nd.relu(mx.nd.FullyConnected(x, w1, b1, num_hidden=4))
    p = mx.nd.softmax(mx.nd.FullyConnected(h, w2, no_bias=True, num_hidden=3))
    return (mx.nd.log(p) * p).sum() + (h * h).mean()


def conv(x, w):
    y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=2, no_bias=True, stride=(2, 2))
    return mx.nd.sigmoid(y).sum() + (x[0:1] ** 2).sum()


def bcast(a, b):
    return ((a - b) / (b * b + 1) + mx.nd.exp(a * 0.1) * b).sum()


@pytest.mark.parametrize("name,fn", [("mlp", mlp), ("conv", conv), ("bcast", bcast)])
def test_matches_mxnet(name, fn):
    data = np.load(FIXTURE)
    n = sum(1 for k in data.files if k.startswith(f"{name}:in"))
    xs = [mx.nd.array(data[f"{name}:in{k}"], dtype=np.float64) for k in range(n)]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    y.backward()
    for k, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), data[f"{name}:grad{k}"], rtol=1e-9, atol=1e-12)
