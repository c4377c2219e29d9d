"""gluon.contrib.nn.SyncBatchNorm on several cpu contexts, as GluonCV uses it, against MXNet 1.9.1
(fixtures_sync_bn/make_fixtures.py) and against one BatchNorm over the concatenated batch."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon

_FIX = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures_sync_bn", "sync_bn.npz"))


def _net(n: int) -> gluon.nn.HybridSequential:
    net = gluon.nn.HybridSequential(prefix=f"n{n}_")
    with net.name_scope():
        net.add(gluon.contrib.nn.SyncBatchNorm(in_channels=4, num_devices=n, momentum=0.8, epsilon=1e-4))
        if n == 2:
            net.add(gluon.contrib.nn.SyncBatchNorm(in_channels=4, num_devices=n))
    return net


# a hybridized call while recording runs small graphs op by op (MXNet's inline_limit); static_alloc
# makes it run the bound executor
@pytest.mark.parametrize("hybridize", [None, {}, {"static_alloc": True}])
@pytest.mark.parametrize("n", [2, 3])
def test_matches_mxnet(n, hybridize):
    ctxs = [mx.cpu(i) for i in range(n)]
    net = _net(n)
    net.initialize(ctx=ctxs)
    if hybridize is not None:
        net.hybridize(**hybridize)
    for k, layer in enumerate(net):
        layer.gamma.set_data(mx.nd.array(_FIX[f"n{n}/gamma{k}"]))
        layer.beta.set_data(mx.nd.array(_FIX[f"n{n}/beta{k}"]))
    for step in range(2):
        f = {name: _FIX[f"n{n}/s{step}/{name}"] for name in ("x", "dy", "y", "dx")}
        xs = gluon.utils.split_and_load(mx.nd.array(f["x"]), ctxs)
        dys = gluon.utils.split_and_load(mx.nd.array(f["dy"]), ctxs)
        for x in xs:
            x.attach_grad()
        with autograd.record():
            ys = [net(x) for x in xs]
            losses = [(y * dy).sum() for y, dy in zip(ys, dys, strict=True)]  # a loss whose gradient is dy
        if step == 0:  # the moving statistics move in backward, as in MXNet's SyncBatchNorm
            np.testing.assert_array_equal(net[0].running_mean.data(ctxs[-1]).asnumpy(), np.zeros(4, np.float32))
        autograd.backward(losses)
        np.testing.assert_allclose(np.concatenate([y.asnumpy() for y in ys]), f["y"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.concatenate([x.grad.asnumpy() for x in xs]), f["dx"], rtol=1e-5, atol=1e-5)
        for k, layer in enumerate(net):
            for p in ("gamma", "beta"):
                np.testing.assert_allclose(np.stack([getattr(layer, p).grad(c).asnumpy() for c in ctxs]),
                                           _FIX[f"n{n}/s{step}/d{p}{k}"], rtol=1e-5, atol=1e-5, err_msg=f"d{p}{k}")
            for p in ("running_mean", "running_var"):
                np.testing.assert_allclose(np.stack([getattr(layer, p).data(c).asnumpy() for c in ctxs]),
                                           _FIX[f"n{n}/s{step}/{p}{k}"], rtol=1e-5, atol=1e-6, err_msg=f"{p}{k}")


def test_one_batch_norm_over_the_concatenated_batch():
    """Shards of different sizes (7 = 3 + 2 + 2): exactly the statistics of the union."""
    rng = np.random.default_rng(3)
    ctxs = [mx.cpu(i) for i in range(3)]
    x = (rng.standard_normal((7, 3, 4)) * 3 + 2).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    g, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.uniform(-1, 1, 3).astype(np.float32)
    sbn = gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=3, epsilon=1e-5)
    sbn.initialize(ctx=ctxs)
    sbn.gamma.set_data(mx.nd.array(g))
    sbn.beta.set_data(mx.nd.array(b))
    parts = [x[:3], x[3:5], x[5:]]
    xs = [mx.nd.array(p, ctx=c) for p, c in zip(parts, ctxs, strict=True)]
    for xi in xs:
        xi.attach_grad()
    with autograd.record():
        ys = [sbn(xi) for xi in reversed(xs)][::-1]  # the devices in any order
    autograd.backward(ys, [mx.nd.array(d, ctx=c) for d, c in zip([dy[:3], dy[3:5], dy[5:]], ctxs, strict=True)])

    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    xhat = (x - mean) / np.sqrt(var + 1e-5)
    gb = g.reshape(1, 3, 1)
    m = x.shape[0] * x.shape[2]
    dx = gb / np.sqrt(var + 1e-5) * (dy - dy.sum((0, 2), keepdims=True) / m
                                     - xhat * (dy * xhat).sum((0, 2), keepdims=True) / m)
    np.testing.assert_allclose(np.concatenate([y.asnumpy() for y in ys]), xhat * gb + b.reshape(1, 3, 1),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.concatenate([xi.grad.asnumpy() for xi in xs]), dx, rtol=1e-4, atol=1e-5)
    sl = [slice(0, 3), slice(3, 5), slice(5, 7)]
    for c, s in zip(ctxs, sl, strict=True):  # gamma and beta: each device's own share (the trainer sums them)
        np.testing.assert_allclose(sbn.gamma.grad(c).asnumpy(), (dy[s] * xhat[s]).sum((0, 2)), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(sbn.beta.grad(c).asnumpy(), dy[s].sum((0, 2)), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(sbn.running_var.data(c).asnumpy(), 0.9 + 0.1 * var.ravel(), rtol=1e-5)
    with autograd.predict_mode():  # inference: the moving statistics, one device alone
        y1 = sbn(xs[1]).asnumpy()
    rm, rv = sbn.running_mean.data(ctxs[1]).asnumpy(), sbn.running_var.data(ctxs[1]).asnumpy()
    np.testing.assert_allclose(y1, (parts[1] - rm.reshape(1, 3, 1)) / np.sqrt(rv.reshape(1, 3, 1) + 1e-5) * gb
                               + b.reshape(1, 3, 1), rtol=1e-5, atol=1e-5)


def _convnet(bn):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(6, 3, padding=1, in_channels=3), bn(in_channels=6), gluon.nn.Activation("relu"),
                gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(5, in_units=6))
    return net


def test_training_on_two_devices_is_training_on_the_whole_batch():
    """GluonCV's loop (split_and_load, a loss per device, autograd.backward, Trainer) with SyncBatchNorm on
    two contexts takes the same steps as BatchNorm on one context with the whole batch."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    sync = _convnet(lambda in_channels: gluon.contrib.nn.SyncBatchNorm(in_channels=in_channels, num_devices=2))
    one = _convnet(gluon.nn.BatchNorm)
    sync.initialize(mx.init.Xavier(), ctx=ctxs)
    one.initialize(ctx=mx.cpu(0))
    for a, b in zip(sync.collect_params().values(), one.collect_params().values(), strict=True):
        b.set_data(a.data(ctxs[0]))
    sync.hybridize(static_alloc=True)
    trainers = [gluon.Trainer(n.collect_params(), "sgd", {"learning_rate": 0.5}) for n in (sync, one)]
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = mx.nd.array(rng.standard_normal((8, 3, 5, 5)))
        y = mx.nd.array(rng.integers(0, 5, 8))
        xs, ys = gluon.utils.split_and_load(x, ctxs), gluon.utils.split_and_load(y, ctxs)
        with autograd.record():
            losses = [loss(sync(xi), yi) for xi, yi in zip(xs, ys, strict=True)]
        autograd.backward(losses)
        trainers[0].step(8)
        with autograd.record():
            whole = loss(one(x), y)
        whole.backward()
        trainers[1].step(8)
    for (name, a), b in zip(sync.collect_params().items(), one.collect_params().values(), strict=True):
        for c in ctxs:
            np.testing.assert_allclose(a.data(c).asnumpy(), b.data().asnumpy(), rtol=1e-4, atol=1e-5, err_msg=name)
