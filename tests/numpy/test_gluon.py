"""Gluon under the NumPy interface: use_np blocks, hybridize on mx.sym.np, legacy layers, training."""

from __future__ import annotations

import numpy as onp
import pytest

import mxasync as mx
from mxasync import gluon, np, npx
from mxasync.gluon import nn


@npx.use_np
class Scaled(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.np.sum(F.npx.relu(x) * 2, axis=1), F.np.mean(x)


@pytest.mark.parametrize("hybridize", [False, True])
def test_np_block(hybridize):
    net = Scaled()
    if hybridize:
        net.hybridize()
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    x.attach_grad()
    with mx.autograd.record():
        s, m = net(x)
    assert type(s) is np.ndarray and m.shape == ()
    s.backward()
    assert s.tolist() == [4.0, 6.0] and x.grad.tolist() == [[0.0, 2.0], [2.0, 0.0]]


def test_training_under_set_np():
    npx.set_np()
    try:
        net = nn.HybridSequential()
        net.add(nn.Dense(16, activation="relu"), nn.Dense(2))
        net.initialize(mx.init.Xavier())
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        rng = onp.random.default_rng(0)
        data = rng.normal(size=(64, 4)).astype("float32")
        label = (data[:, 0] + data[:, 1] > 0).astype("float32")
        loader = gluon.data.DataLoader(gluon.data.ArrayDataset(data, label), batch_size=16)
        for _ in range(10):
            for xb, yb in loader:
                assert type(xb) is np.ndarray
                with mx.autograd.record():
                    loss = loss_fn(net(xb), yb)
                loss.backward()
                trainer.step(xb.shape[0])
        pred = net(np.array(data)).argmax(axis=1)
        assert type(pred) is np.ndarray
        assert (pred.asnumpy() == label).mean() > 0.9
    finally:
        npx.reset_np()


def test_initializers_get_mx_np_arrays_under_np_array():
    # MXNet 1.9.1 hands _init_weight an mx.np array under set_np: d2l's custom initializer does
    # ``data *= np.abs(data) >= 5`` (a bool mask), which a legacy NDArray refuses
    seen = []

    class Masked(mx.init.Initializer):
        def _init_weight(self, name, data):
            seen.append(type(data))
            data[:] = np.array(onp.arange(-6.0, 6.0).reshape(data.shape))
            data *= np.abs(data) >= 5

    with mx.util.np_array(True):
        net = nn.Dense(4, in_units=3)
        net.initialize(Masked())
        weight = net.weight.data()
    assert seen == [np.ndarray] and isinstance(weight, np.ndarray)
    want = onp.arange(-6.0, 6.0).reshape(4, 3)
    onp.testing.assert_array_equal(weight.asnumpy(), want * (abs(want) >= 5))
    with mx.util.np_array(True):
        nn.Dense(4, in_units=3).initialize(mx.init.Xavier())  # the built-in ones take them too
