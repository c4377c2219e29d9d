"""Issue 25, item 5a: identical forward+backward passes on CPU give identical bits: depthwise and
grouped convolutions and BatchNorm in training and inference mode, imperative and hybridized, with
the numpy backend's parallel paths forced on (kernels split over threads, BLAS on every core, as on
an idle machine), so a race between threads or ops on shared scratch shows as differing bits."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon
from mxasync.backends.numpy import blas, parallel, pressure

pytestmark = pytest.mark.fault


@pytest.fixture
def idle_machine(monkeypatch):
    monkeypatch.setattr(pressure, "runnable_elsewhere", lambda: 0)
    monkeypatch.setattr(blas, "_runnable_elsewhere", lambda: 0)
    monkeypatch.setattr(parallel, "CHECK_LOAD", False)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 4096)


def _net(hybrid: bool):
    mx.random.seed(7)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(16, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.Conv2D(16, 3, padding=1, groups=16), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.Conv2D(32, 1), gluon.nn.Conv2D(32, 3, strides=2, padding=1, groups=4), gluon.nn.BatchNorm(),
            gluon.nn.Activation("relu"), gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    return net


def _pass(hybrid: bool, train: bool, x):
    net = _net(hybrid)
    with autograd.record(train_mode=train):
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    params = net.collect_params()
    return [y.asnumpy()] + [p.grad().asnumpy() for p in params.values() if p.grad_req != "null"] + \
        [p.data().asnumpy() for n, p in params.items() if "running" in n]


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("train", [True, False], ids=["bn_train", "bn_inference"])
def test_identical_passes_give_identical_bits(idle_machine, hybrid, train):
    x = mx.nd.array(np.random.RandomState(0).randn(8, 3, 32, 32).astype(np.float32))
    first = _pass(hybrid, train, x)
    for _ in range(2):
        again = _pass(hybrid, train, x)
        for k, (a, b) in enumerate(zip(first, again, strict=True)):
            assert a.tobytes() == b.tobytes(), f"array {k}: up to {np.abs(a - b).max()} apart"
