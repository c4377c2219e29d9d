"""Issue 25, item 3: a hybridized block fed many input shapes keeps a bounded cache of executors,
shares memory between them, and frees everything when it goes (measured by the CPU pool's counters)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon
from mxasync.runtime.storage import Storage

pytestmark = pytest.mark.fault


def _in_use() -> int:
    for _ in range(2):  # a collected array's delete is an engine op: let it run
        gc.collect()
        mx.nd.waitall()
    return Storage.get(mx.cpu()).in_use


def _net(seed: int = 0):
    mx.random.seed(seed)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(512, activation="relu", flatten=False), gluon.nn.Dense(8, flatten=False))
    net.initialize(mx.init.Uniform(0.1))
    net.hybridize()
    return net


def _step(net, length: int):
    x = mx.nd.ones((8, length, 16)) * 0.1  # blocks of 16 KB a step: pooled (counted) from length 4
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    return loss


def test_the_cache_keeps_the_most_recent_signatures_only(monkeypatch):
    monkeypatch.setenv("MXASYNC_CACHED_GRAPH_SIZE", "4")
    base = _in_use()
    one = _net()
    _step(one, 62)
    single = _in_use() - base
    del one
    base = _in_use()
    net = _net()
    for length in range(8, 64, 2):
        _step(net, length)
    grown = _in_use() - base
    assert len(net._cached_op._states) == 4
    assert list(net._cached_op._states)[-1][2][0][0] == (8, 62, 16)  # the newest stays
    # 28 signatures, 4 executors kept: without a bound this is ~14 times one executor's memory
    assert grown < 5 * single, (grown, single)


def test_new_shapes_share_the_memory_plan_of_the_last_one(monkeypatch):
    monkeypatch.setenv("MXASYNC_CACHED_GRAPH_SIZE", "64")
    base = _in_use()
    one = _net()
    _step(one, 40)
    single = _in_use() - base
    del one
    base = _in_use()
    net = _net()
    for length in range(40, 8, -1):  # every later plan fits in the first one's blocks
        _step(net, length)
    assert len(net._cached_op._states) == 32
    assert _in_use() - base < 3 * single, (_in_use() - base, single)


def test_shared_memory_never_changes_a_result():
    """Two shapes recorded before one backward (their executors may share blocks): the gradients
    are those of the imperative block."""
    grads = []
    for hybrid in (False, True):
        net = _net(seed=3)
        if not hybrid:
            net.hybridize(active=False)
        for length in (5, 3, 5):  # bind 5, bind 3 (sharing 5's blocks), then reuse
            _step(net, length)
        a, b = mx.nd.ones((2, 5, 16)) * 0.3, mx.nd.ones((2, 3, 16)) * -0.2
        with autograd.record():
            loss = net(a).sum() * 2 + (net(b) ** 2).sum()
        loss.backward()
        grads.append([p.grad().asnumpy() for p in net.collect_params().values()])
    for imperative, hybridized in zip(*grads, strict=True):
        np.testing.assert_allclose(hybridized, imperative, rtol=1e-5, atol=1e-6)


def test_everything_is_freed_with_the_block():
    base = _in_use()
    net = _net()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for length in range(8, 20):
        _step(net, length)
        trainer.step(4)
    assert _in_use() > base
    del net, trainer
    assert _in_use() <= base, "the block's executors outlived it"
