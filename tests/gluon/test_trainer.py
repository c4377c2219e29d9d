"""Trainer: steps against numpy's SGD/Adam, KVStore choices, several contexts, states, stale gradients."""

from __future__ import annotations

import numpy as np
import pytest
from gluon_layers import mlp

import mxasync as mx
from mxasync import autograd, gluon


def _quadratic_step(params, targets):
    """Backward of sum((p - t)^2 * 0.5) for every parameter: the gradient is p - t."""
    with autograd.record():
        loss = sum((((p.data() - t) ** 2) * 0.5).sum() for p, t in zip(params, targets, strict=True))
    loss.backward()


def test_sgd_momentum_wd_against_numpy():
    rng = np.random.RandomState(0)
    w0 = [rng.randn(3, 4).astype(np.float32), rng.randn(5).astype(np.float32)]
    ts = [rng.randn(*w.shape).astype(np.float32) for w in w0]
    mults = (1.0, 0.5)
    params = [gluon.Parameter(f"p{i}_weight", shape=w.shape, lr_mult=mults[i]) for i, w in enumerate(w0)]
    for p, w in zip(params, w0, strict=True):
        p.initialize(mx.init.Zero())
        p.set_data(mx.nd.array(w))
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    ws, moms = [w.copy() for w in w0], [np.zeros_like(w) for w in w0]
    batch = 4
    for _ in range(3):
        _quadratic_step(params, [mx.nd.array(t) for t in ts])
        trainer.step(batch)
        for i, p in enumerate(params):
            lr = 0.1 * p.lr_mult
            g = (ws[i] - ts[i]) / batch + 0.01 * ws[i]
            moms[i] = 0.9 * moms[i] - lr * g
            ws[i] = ws[i] + moms[i]
    for p, w in zip(params, ws, strict=True):
        np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    assert trainer._kvstore is None  # one context: no store, as MXNet decides


def test_adam_against_numpy():
    rng = np.random.RandomState(1)
    w0 = rng.randn(6).astype(np.float32)
    t = rng.randn(6).astype(np.float32)
    p = gluon.Parameter("w", shape=(6,))
    p.initialize(mx.init.Zero())
    p.set_data(mx.nd.array(w0))
    trainer = gluon.Trainer([p], "adam", {"learning_rate": 0.01})
    w, m, v = w0.copy(), np.zeros(6), np.zeros(6)
    for step in range(1, 5):
        _quadratic_step([p], [mx.nd.array(t)])
        trainer.step(2)
        g = (w - t) / 2
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        lr = 0.01 * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
        w = w - lr * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("update_on_kvstore", [None, True, False])
def test_several_contexts_sum_gradients(update_on_kvstore):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    p = gluon.Parameter("x", shape=(4,))
    p.initialize(mx.init.Zero(), ctx=ctxs)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, update_on_kvstore=update_on_kvstore)
    with autograd.record():
        for k, w in enumerate(p.list_data()):
            ((w + 1) * (k + 1)).sum().backward()
    trainer.step(1)
    assert trainer._kvstore.type == "device"
    assert trainer._update_on_kvstore is (update_on_kvstore is not False)
    for w in p.list_data():
        np.testing.assert_allclose(w.asnumpy(), np.full(4, -3.0))


def test_allreduce_then_update_and_guards():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    p = gluon.Parameter("x", shape=(3,))
    p.initialize(mx.init.Zero(), ctx=ctxs)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, update_on_kvstore=False)
    with autograd.record():
        for k, w in enumerate(p.list_data()):
            (w * k).sum().backward()
    trainer.allreduce_grads()
    np.testing.assert_array_equal(p.grad(mx.cpu(0)).asnumpy(), p.grad(mx.cpu(1)).asnumpy())
    trainer.update(1)
    np.testing.assert_allclose(p.data(mx.cpu(1)).asnumpy(), np.full(3, -1.0))
    on_kv = gluon.Trainer([p], "sgd", update_on_kvstore=True)
    on_kv._init_kvstore()
    with pytest.raises(AssertionError):
        on_kv.allreduce_grads()
    with pytest.raises(AssertionError):
        on_kv.update(1)


def test_stale_gradient_is_refused_unless_ignored():
    used, unused = gluon.Parameter("a", shape=(2,)), gluon.Parameter("b", shape=(2,))
    for p in (used, unused):
        p.initialize(mx.init.One())
    trainer = gluon.Trainer([used, unused], "sgd", {"learning_rate": 1.0})
    _quadratic_step([used], [mx.nd.zeros((2,))])
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(1)
    _quadratic_step([used], [mx.nd.zeros((2,))])
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(unused.data().asnumpy(), [1, 1])
    np.testing.assert_array_equal(used.data().asnumpy(), [0, 0])


def test_learning_rate_and_scheduler():
    p = gluon.Parameter("w", shape=(1,))
    p.initialize()
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    assert trainer.learning_rate == 0.5
    trainer.set_learning_rate(0.25)
    assert trainer.learning_rate == 0.25 and trainer.optimizer.lr == 0.25
    sched = mx.lr_scheduler.FactorScheduler(1, factor=0.5, base_lr=1.0)
    t2 = gluon.Trainer([p], "sgd", {"lr_scheduler": sched})
    with pytest.raises(UserWarning):
        t2.set_learning_rate(0.1)


def test_save_load_states(tmp_path):
    net = mlp(batchnorm=False)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    x = mx.nd.ones((2, 5))
    for _ in range(2):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(2)
    fname = str(tmp_path / "t.states")
    trainer.save_states(fname)
    moms = {k: v.asnumpy().copy() for k, v in trainer._updaters[0].states.items()}
    other = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    other.load_states(fname)
    for k, v in other._updaters[0].states.items():
        np.testing.assert_array_equal(v.asnumpy(), moms[k])
    assert other.optimizer.param_dict[0] is trainer._params[0]


def test_params_sorted_by_name_and_validated():
    pd = gluon.ParameterDict()
    b, a = pd.get("b", shape=(1,)), pd.get("a", shape=(1,))
    pd.initialize()
    trainer = gluon.Trainer(pd, "sgd")
    assert trainer._params == [a, b]
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        gluon.Trainer(a, "sgd")
    c = gluon.Parameter("c", shape=(1,))
    c.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(AssertionError, match="same set of contexts"):
        gluon.Trainer([a, c], "sgd")


def test_hybridized_training_matches_imperative():
    x = mx.nd.random.uniform(shape=(8, 5))
    results = []
    for hybrid in (False, True):
        mx.random.seed(3)
        net = mlp(batchnorm=False)
        net.initialize(mx.init.Xavier())
        net.hybridize(hybrid)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9})
        for _ in range(3):
            with autograd.record():
                loss = (net(x) ** 2).mean()
            loss.backward()
            trainer.step(1)
        results.append([p.data().asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_store_without_optimizer_updates_on_workers():
    p = gluon.Parameter("x", shape=(3,))
    p.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    kv = mx.kv.create("teststore")
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, kvstore=kv)
    with autograd.record():
        for w in p.list_data():
            (w + 1).sum().backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    np.testing.assert_array_equal(p.data(mx.cpu(1)).asnumpy(), [-2, -2, -2])
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        gluon.Trainer([p], "sgd", kvstore=kv, update_on_kvstore=True)._init_kvstore()
