"""The CuPy backend's cuDNN convolution, run on CPU against a fake frontend (CI has no GPU).

The fake reads every tensor back from the pointer, dims and strides it is given and runs an
independent reference convolution, so these check the graphs' geometry and the
override contract numerically; the plan cache, the autotune modes and the fallbacks are
checked by what the fake recorded.  On a GPU the same code drives NVIDIA's real frontend.
"""

from __future__ import annotations

import logging
import types

import numpy as np
import pytest
from fake_cudnn import FakeFrontend, ref_dgrad, ref_fprop, ref_wgrad

from mxasync.backends.cupy import cudnn
from mxasync.backends.cupy.cudnn import conv, frontend
from mxasync.backends.cupy.cudnn.plans import UNSUPPORTED, Autotune, PlanCache, autotune_mode


@pytest.fixture
def fe(monkeypatch):
    fake = FakeFrontend()
    frontend.use(fake)
    monkeypatch.setattr(conv, "PLANS", PlanCache())
    # a plan's time is the fake's figure for it, not the wall clock
    monkeypatch.setattr(conv, "time_plan", lambda xp, run: (run(), fake.last_time)[1])
    yield fake
    frontend.use(None)


def params(kernel, **kw):
    base = dict(kernel=kernel, stride=(), dilate=(), pad=(), num_filter=None, num_group=1, workspace=1024,
                no_bias=False, cudnn_tune=None, cudnn_off=False, layout=None)
    base.update(kw)
    return types.SimpleNamespace(**base)


CASES = [  # (data shape, filters, kernel, stride, dilate, pad, groups)
    ((2, 3, 11), 4, (3,), (2,), (1,), (1,), 1),
    ((2, 4, 7, 8), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 9, 9), 4, (3, 2), (2, 1), (2, 1), (0, 1), 2),
    ((2, 6, 8, 8), 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),  # depthwise
    ((1, 2, 5, 6, 4), 3, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 1),
]


@pytest.mark.parametrize("shape,nf,kernel,stride,dilate,pad,groups", CASES)
def test_forward_and_backward_match_the_reference(fe, shape, nf, kernel, stride, dilate, pad, groups):
    rng = np.random.default_rng(0)
    p = params(kernel, stride=stride, dilate=dilate, pad=pad, num_filter=nf, num_group=groups)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((nf, shape[1] // groups, *kernel)).astype(np.float32)
    b = rng.standard_normal(nf).astype(np.float32)
    y = conv.convolution_forward(np, p, None, x, w, b)
    expect = ref_fprop(x, w, pad, stride, dilate) + b.reshape((1, -1) + (1,) * len(kernel))
    np.testing.assert_allclose(y, expect, rtol=1e-4, atol=1e-4)

    dy = rng.standard_normal(y.shape).astype(np.float32)
    gd, gw, gb = conv.convolution_backward(np, p, [dy], [x, w, b], [None], [True, True, True], [None] * 3)
    np.testing.assert_allclose(gd, ref_dgrad(dy, w, x.shape, pad, stride, dilate), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, ref_wgrad(x, dy, w.shape, pad, stride, dilate), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(gb, dy.sum(axis=(0, *range(2, dy.ndim))), rtol=1e-5, atol=1e-5)
    assert {k for k, _ in fe.executed} == {"fprop", "dgrad", "wgrad"}


def test_the_reference_agrees_with_the_generic_kernel():
    """The fake's reference is checked once against the project's own im2col kernel."""
    from mxasync.operator.kernels.conv.convolution import convolution

    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 9, 9))
    w = rng.standard_normal((6, 2, 3, 2))
    got = convolution(np, x, w, None, (3, 2), (2, 1), (2, 1), (0, 1), num_filter=6, num_group=2, no_bias=True)
    np.testing.assert_allclose(ref_fprop(x, w, (0, 1), (2, 1), (2, 1)), got, rtol=1e-10, atol=1e-10)


def test_backward_writes_into_the_planned_arrays_and_skips_unneeded_passes(fe):
    p = params((3, 3), pad=(1, 1), num_filter=2, no_bias=True)
    x, w = np.ones((1, 2, 4, 4), np.float32), np.ones((2, 2, 3, 3), np.float32)
    dy = np.ones((1, 2, 4, 4), np.float32)
    gw_into = np.empty_like(w)
    grads = conv.convolution_backward(np, p, [dy], [x, w], [None], [False, True], [None, gw_into])
    assert grads[0] is None and grads[1] is gw_into and len(grads) == 2
    assert {k for k, _ in fe.executed} == {"wgrad"}   # no dgrad: the data gradient was not asked for


def test_one_build_per_key_and_a_bounded_cache(fe, monkeypatch):
    monkeypatch.setattr(conv, "PLANS", PlanCache(capacity=2))
    p = params((3, 3), pad=(1, 1), num_filter=2)
    w = np.ones((2, 2, 3, 3), np.float32)
    for n in (1, 1, 1, 2, 3, 1):
        conv.convolution_forward(np, p, None, np.ones((n, 2, 5, 5), np.float32), w)
    # batch 1 built, hit twice; 2 and 3 built, which evicts 1 (capacity 2); 1 built again
    assert conv.PLANS.builds == 4 and conv.PLANS.hits == 2 and len(conv.PLANS) == 2
    assert len(fe.handles) == 1 and fe.streams == [0]          # one handle; bound to the stream once


@pytest.mark.parametrize("env,tune,policy,plan", [
    ("0", None, "HEURISTICS_CHOICE", 0),   # the heuristics' choice, nothing timed
    ("1", None, "ALL", 1),                 # fastest within 1024 MB: plan 2 (4 GB) is left out
    ("2", None, "ALL", 2),                 # fastest whatever its workspace
    ("0", "fastest", "ALL", 2),            # the op's cudnn_tune overrides the environment
    ("2", "off", "HEURISTICS_CHOICE", 0),
])
def test_autotune_modes_follow_mxnet(fe, monkeypatch, env, tune, policy, plan):
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", env)
    p = params((3, 3), num_filter=2, cudnn_tune=tune)
    conv.convolution_forward(np, p, None, np.ones((1, 2, 5, 5), np.float32), np.ones((2, 2, 3, 3), np.float32))
    graph = fe.graphs[-1]
    assert ("build_plans", policy) in graph.steps
    assert fe.executed[-1] == ("fprop", plan)
    timed = [e for e in fe.executed[:-1]]
    assert (timed == []) == (policy == "HEURISTICS_CHOICE")


def test_the_workspace_limit_is_the_ops_workspace_param(fe, monkeypatch):
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1")
    p = params((3, 3), num_filter=2, workspace=1)  # 1 MB: only plan 0 (no workspace) qualifies
    conv.convolution_forward(np, p, None, np.ones((1, 2, 5, 5), np.float32), np.ones((2, 2, 3, 3), np.float32))
    assert fe.graphs[-1].limit == 1 << 20 and fe.executed[-1] == ("fprop", 0)


def test_an_unsupported_graph_falls_back_once_and_is_remembered(fe, caplog):
    fe.unsupported = lambda graph: True
    p = params((3, 3), num_filter=2)
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((2, 2, 3, 3), np.float32)
    with caplog.at_level(logging.DEBUG, logger="mxasync.backends.cupy.cudnn"):
        assert conv.convolution_forward(np, p, None, x, w) is NotImplemented
        assert conv.convolution_forward(np, p, None, x, w) is NotImplemented
    assert len(fe.graphs) == 1 and conv.PLANS.builds == 1          # asked cuDNN once
    assert next(iter(conv.PLANS._entries.values())) is UNSUPPORTED
    assert sum("generic kernel" in r.message for r in caplog.records) == 1


@pytest.mark.parametrize("why", ["off", "float64", "layout", "strided"])
def test_cases_cudnn_does_not_take_run_the_generic_kernel(fe, why):
    p = params((3, 3), num_filter=2, cudnn_off=why == "off", layout="NHWC" if why == "layout" else None)
    x = np.ones((1, 2, 5, 5), np.float64 if why == "float64" else np.float32)
    if why == "strided":
        x = np.ones((1, 2, 5, 10), np.float32)[..., ::2]
    assert conv.convolution_forward(np, p, None, x, np.ones((2, 2, 3, 3), x.dtype)) is NotImplemented
    assert fe.graphs == []


def test_without_the_frontend_the_generic_kernel_runs(monkeypatch):
    frontend.use(None)
    monkeypatch.setattr(frontend, "load", lambda: None)
    p = params((3, 3), num_filter=2)
    assert conv.convolution_forward(np, p, None, np.ones((1, 2, 5, 5), np.float32),
                                    np.ones((2, 2, 3, 3), np.float32)) is NotImplemented


def test_autotune_env_is_checked():
    assert autotune_mode(None, {}) is Autotune.LIMITED
    with pytest.raises(ValueError, match="MXNET_CUDNN_AUTOTUNE_DEFAULT"):
        autotune_mode(None, {"MXNET_CUDNN_AUTOTUNE_DEFAULT": "fast"})


def test_the_overrides_run_through_the_operator_seam(fe):
    """A device whose backend installs the cuDNN kernels: mx.nd.Convolution forward and autograd backward
    run them through Backend.overrides, and agree with the CPU."""
    import mxasync as mx
    from mxasync.backends import Backend

    class FakeGpu(Backend):
        name, device_type, api_version = "fake_cudnn_gpu", "fakecudnn", 1

        def __init__(self):
            super().__init__()
            cudnn.install(self)

        def start(self):
            self.xp = np

    mx.backends.register_backend(FakeGpu())
    rng = np.random.default_rng(2)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 6, 6), (4, 3, 3, 3), (4,)))
    results = []
    for ctx in (mx.cpu(), mx.device("fakecudnn", 0)):
        xs, ws, bs = (mx.nd.array(a, ctx=ctx) for a in (x, w, b))
        for a in (xs, ws, bs):
            a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xs, ws, bs, kernel=(3, 3), num_filter=4, pad=(1, 1))
            loss = (y * y).sum()
        loss.backward()
        results.append([a.asnumpy() for a in (y, xs.grad, ws.grad, bs.grad)])
    for cpu, dev in zip(*results, strict=True):
        np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-3)
    assert {k for k, _ in fe.executed} == {"fprop", "dgrad", "wgrad"}
