"""``_contrib_SyncBatchNorm`` with ``ndev > 1``: its copies on several cpu contexts meet in rounds
(mxasync/operator/contrib/_device_rounds.py) without holding an engine thread; numerical gradients;
what happens when a device never comes. The gluon layer against MXNet: tests/gluon/test_sync_batch_norm.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync.operator.contrib._device_rounds import open_rounds

CTXS = [mx.cpu(0), mx.cpu(1)]


def _call(x, gamma, beta, key, ndev=2, **kw):
    ctx, c = x.context, x.shape[1]
    aux = [mx.nd.zeros((c,), ctx=ctx, dtype=x.dtype), mx.nd.ones((c,), ctx=ctx, dtype=x.dtype)]
    return mx.nd.contrib.SyncBatchNorm(x, gamma, beta, *aux, key=key, ndev=ndev, fix_gamma=False, eps=1e-5, **kw)


def test_numerical_gradient_over_two_devices():
    """float64, x and each device's gamma/beta: central differences of sum(w * y) over both devices."""
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((2, 3, 2)) * 2 + 1 for _ in CTXS]
    gs = [rng.uniform(0.5, 1.5, 3) for _ in CTXS]
    bs = [rng.uniform(-1, 1, 3) for _ in CTXS]
    ws = [rng.standard_normal((2, 3, 2)) for _ in CTXS]

    def f(xs, gs, bs) -> float:
        with autograd.train_mode():
            ys = [_call(*(mx.nd.array(a, ctx=c, dtype="float64") for a in (x, g, b)), "numgrad")
                  for x, g, b, c in zip(xs, gs, bs, CTXS, strict=True)]
        return float(sum((y.asnumpy() * w).sum() for y, w in zip(ys, ws, strict=True)))

    args = [[mx.nd.array(a, ctx=c, dtype="float64") for a, c in zip(group, CTXS, strict=True)] for group in (xs, gs, bs)]
    for group in args:
        for a in group:
            a.attach_grad()
    with autograd.record():
        ys = [_call(x, g, b, "numgrad") for x, g, b in zip(*args, strict=True)]
    autograd.backward(ys, [mx.nd.array(w, ctx=c, dtype="float64") for w, c in zip(ws, CTXS, strict=True)])
    values = [xs, gs, bs]
    h = 1e-6
    for gi, group in enumerate(values):
        for d in range(len(CTXS)):
            analytic = args[gi][d].grad.asnumpy()
            numeric = np.zeros_like(group[d])
            for idx in np.ndindex(group[d].shape):
                plus = [[a.copy() for a in v] for v in values]
                minus = [[a.copy() for a in v] for v in values]
                plus[gi][d][idx] += h
                minus[gi][d][idx] -= h
                numeric[idx] = (f(*plus) - f(*minus)) / (2 * h)
            np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6, err_msg=f"input {gi} on device {d}")


def test_a_device_that_comes_late_holds_no_thread():
    """Device 0's copies of 8 layers are pushed before any of device 1's, which come in the reverse
    order: a barrier holding an engine worker per waiting copy would hang on this (2 workers)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    params = [(mx.nd.ones((2,), ctx=c), mx.nd.zeros((2,), ctx=c)) for c in CTXS]
    keys = [f"late{k}" for k in range(8)]
    with autograd.train_mode():
        first = {k: _call(mx.nd.array(x[:2], ctx=CTXS[0]), *params[0], k) for k in keys}
        second = {k: _call(mx.nd.array(x[2:], ctx=CTXS[1]), *params[1], k) for k in reversed(keys)}
    ref = (x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + 1e-5)
    for k in keys:
        np.testing.assert_allclose(np.concatenate([first[k].asnumpy(), second[k].asnumpy()]), ref, rtol=1e-5,
                                   atol=1e-5)
    assert not {n: r for n, r in open_rounds().items() if n[0].startswith("late")}


def test_rounds_follow_each_devices_steps():
    """Three steps pushed device by device: round k pairs the k-th call of each device, whatever order
    the devices' calls run in (aux writes order each device's own steps)."""
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((4, 2, 3)).astype(np.float32) * (s + 1) for s in range(3)]
    g = [(mx.nd.ones((2,), ctx=c), mx.nd.zeros((2,), ctx=c)) for c in CTXS]
    aux = [[mx.nd.zeros((2,), ctx=c), mx.nd.ones((2,), ctx=c)] for c in CTXS]
    outs = []
    with autograd.train_mode():
        for d in (1, 0):  # every step of device 1, then every step of device 0
            outs.append([mx.nd.contrib.SyncBatchNorm(mx.nd.array(x[2 * d:2 * d + 2], ctx=CTXS[d]), *g[d], *aux[d],
                                                     key="steps", ndev=2, fix_gamma=False, eps=1e-5)
                         for x in data])
    for s, x in enumerate(data):
        ref = (x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + 1e-5)
        np.testing.assert_allclose(np.concatenate([outs[1][s].asnumpy(), outs[0][s].asnumpy()]), ref,
                                   rtol=1e-5, atol=1e-5, err_msg=f"step {s}")


def test_a_device_that_never_comes_is_an_error(monkeypatch):
    monkeypatch.setenv("MXASYNC_SYNC_BATCH_NORM_TIMEOUT", "0.2")
    x = mx.nd.ones((2, 3), ctx=CTXS[0])
    with autograd.train_mode():
        y = _call(x, mx.nd.ones((3,)), mx.nd.zeros((3,)), "lonely")
    with pytest.raises(mx.MXNetError, match=r"key='lonely'.*forward round waited 0.2 s .*ndev=2 .*only 1 came "
                                            r"\(cpu\(0\)\)"):
        y.asnumpy()
    assert ("lonely", "forward") not in open_rounds()
    with autograd.train_mode():  # the key works again once both devices come
        ys = [_call(mx.nd.array([[1.0], [3.0]], ctx=c), mx.nd.ones((1,), ctx=c), mx.nd.zeros((1,), ctx=c), "lonely")
              for c in CTXS]
    np.testing.assert_allclose(ys[1].asnumpy().ravel(), [-1, 1], atol=1e-4)


def test_copies_that_disagree_on_ndev_fail():
    with autograd.train_mode():
        a = _call(mx.nd.ones((2, 3), ctx=CTXS[0]), mx.nd.ones((3,)), mx.nd.zeros((3,)), "disagree", ndev=2)
        b = _call(mx.nd.ones((2, 3), ctx=CTXS[1]), mx.nd.ones((3,), ctx=CTXS[1]), mx.nd.zeros((3,), ctx=CTXS[1]),
                  "disagree", ndev=3)
    for y in (a, b):
        with pytest.raises(mx.MXNetError, match="disagree on ndev"):
            y.asnumpy()


def test_inference_and_global_stats_need_no_other_device():
    x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]], ctx=CTXS[1])
    gb = (mx.nd.ones((2,), ctx=CTXS[1]), mx.nd.zeros((2,), ctx=CTXS[1]))
    y = _call(x, *gb, "alone")  # not training: the moving statistics (0, 1)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    with autograd.train_mode():
        y = _call(x, *gb, "alone", use_global_stats=True)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-6)


_NAIVE = """
import mxasync as mx
with mx.autograd.train_mode():
    y = mx.nd.contrib.SyncBatchNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,)),
                                    mx.nd.ones((3,)), key="naive", ndev=2)
try:
    y.asnumpy()
except mx.MXNetError as exc:
    print(exc)
"""


def test_the_naive_engine_refuses_at_once():
    """MXASYNC_ENGINE_TYPE=naive runs an op at its push: device 0's copy would wait there for device 1."""
    env = dict(os.environ, MXASYNC_ENGINE_TYPE="naive")
    run = subprocess.run([sys.executable, "-c", _NAIVE], env=env, capture_output=True, text=True, timeout=120)
    assert "ndev=2 needs the threaded engine" in run.stdout, run.stdout + run.stderr
