"""The plugin contract (docs/backend_plugins.md): device types, the takeover rule, what overrides receive,
and the example plugin (examples/backend_plugin) end to end."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import mxasync as mx
from mxasync.backends import PLUGIN_API_VERSION, Backend, get_backend, registry
from mxasync.base import MXAsyncError
from mxasync.operator import override_signature
from mxasync.operator.overrides import CONTRACT_VERSION


def _ctx_backend(device_type, **overrides):
    """A numpy-backed backend for a fresh device type, with ``overrides``; registered in-process."""

    class Dev(Backend):
        name, api_version = f"dev_{device_type}", PLUGIN_API_VERSION

        def start(self):
            self.xp = np

    Dev.device_type = device_type
    b = Dev()
    b.overrides.update(overrides)
    registry.register_backend(b)
    return b


@pytest.fixture
def clean_registry():
    registry.reset()
    yield
    registry.reset()


def test_contract_version_is_the_plugin_api_version():
    assert CONTRACT_VERSION == PLUGIN_API_VERSION == mx.backends.PLUGIN_API_VERSION == 1


def test_a_plugin_device_type_is_a_context(clean_registry):
    with pytest.raises(MXAsyncError, match="unknown device type 'contract_a'.*backend plugin"):
        mx.Context("contract_a", 0)
    _ctx_backend("contract_a")
    ctx = mx.Context("contract_a", 1)
    assert ctx == mx.device("contract_a", 1) and repr(ctx) == "contract_a(1)"
    assert ctx.device_typeid >= 16 and mx.Context(ctx.device_typeid, 1) == ctx
    x = mx.nd.array([1.0, 2.0], ctx=ctx)
    assert x.context == ctx and (x * 3).asnumpy().tolist() == [3.0, 6.0]
    assert x.copyto(mx.cpu()).context == mx.cpu() and x.as_in_context(mx.cpu()).asnumpy().tolist() == [1.0, 2.0]


def test_relu_backward_override_gets_what_relu_keeps(clean_registry):
    seen = {}

    def relu_bwd(xp, params, out_grads, inputs, outputs):
        seen["inputs"], seen["outputs"] = list(inputs), [np.array(o) for o in outputs]
        return [out_grads[0] * (outputs[0] > 0)]

    _ctx_backend("contract_b", **{"relu.backward": relu_bwd})
    x = mx.nd.array([-1.0, 2.0, 3.0], ctx=mx.device("contract_b"))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 1.0, 1.0]
    assert seen["inputs"] == [None]  # relu keeps its output only: its input's memory may be gone
    np.testing.assert_array_equal(seen["outputs"][0], [0.0, 2.0, 3.0])
    assert override_signature("relu")["keeps"] == ("out_grads", "outputs")


def test_forward_overrides_without_out_and_with_out(clean_registry):
    calls = []

    def fc_plain(xp, params, data, weight, bias=None):  # the documented signature: no out=
        calls.append("fc")
        return data @ weight.T + bias

    def act_out(xp, params, data, out=None):
        calls.append(("act", out is not None))
        return xp.tanh(data, out=out) if out is not None else xp.tanh(data)

    def conv_plain(xp, params, op_ctx, data, weight, bias=None):
        calls.append("conv")
        return NotImplemented  # hands the case back to the generic kernel

    _ctx_backend("contract_c", FullyConnected=fc_plain, Activation=act_out, Convolution=conv_plain)
    ctx = mx.device("contract_c")
    rs = np.random.RandomState(0)
    x, w, b = (rs.randn(*s).astype(np.float32) for s in ((2, 3), (4, 3), (4,)))
    y = mx.nd.FullyConnected(mx.nd.array(x, ctx=ctx), mx.nd.array(w, ctx=ctx), mx.nd.array(b, ctx=ctx), num_hidden=4)
    z = mx.nd.Activation(y, act_type="tanh")
    np.testing.assert_allclose(z.asnumpy(), np.tanh(x @ w.T + b), rtol=1e-5)
    img, k = rs.randn(1, 1, 4, 4).astype(np.float32), rs.randn(2, 1, 3, 3).astype(np.float32)
    c = mx.nd.Convolution(mx.nd.array(img, ctx=ctx), mx.nd.array(k, ctx=ctx), kernel=(3, 3), num_filter=2,
                          no_bias=True)
    ref = mx.nd.Convolution(mx.nd.array(img), mx.nd.array(k), kernel=(3, 3), num_filter=2, no_bias=True)
    np.testing.assert_allclose(c.asnumpy(), ref.asnumpy(), rtol=1e-5)
    assert calls == ["fc", ("act", True), "conv"]
    sig = override_signature("FullyConnected", num_hidden=4)
    assert sig["forward"] == "fwd(xp, params, data, weight, bias) -> output" and sig["out"] is True


def test_a_cpu_plugin_does_not_replace_numpy_unasked(clean_registry, caplog, monkeypatch):
    class Fast(Backend):
        name, device_type, priority = "fast_cpu", "cpu", 100

        def start(self):
            self.xp = np

    registry.register_backend(Fast())
    with caplog.at_level(logging.INFO, logger="mxasync.backends"):
        assert get_backend("cpu").name == "numpy"
    info = {b["name"]: b for b in mx.backends.list()}
    assert info["numpy"]["serving"] and info["numpy"]["builtin"] and not info["fast_cpu"]["serving"]
    assert "standby" in info["fast_cpu"]["note"] and "MXASYNC_BACKEND_CPU=fast_cpu" in info["fast_cpu"]["note"]
    assert any("fast_cpu" in r.getMessage() and "standby" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mxasync.backends"):
        registry.use("cpu", "fast_cpu")
        assert get_backend("cpu").name == "fast_cpu"
    takeover = [r for r in caplog.records if "takes over" in r.getMessage()]
    assert len(takeover) == 1 and takeover[0].levelno == logging.WARNING and "'numpy'" in takeover[0].getMessage()
    registry.use("cpu", None)
    assert get_backend("cpu").name == "numpy"
    monkeypatch.setenv("MXASYNC_BACKEND_CPU", "fast_cpu")
    registry.use("cpu", None)
    assert get_backend("cpu").name == "fast_cpu"
    monkeypatch.setenv("MXASYNC_BACKEND_CPU", "nope")
    registry.use("cpu", None)
    with pytest.raises(MXAsyncError, match="MXASYNC_BACKEND_CPU=nope: no installed backend 'nope'"):
        get_backend("cpu")


def test_a_backend_for_another_contract_version_is_refused(clean_registry):
    class Future(Backend):
        name, device_type, api_version = "future", "contract_d", PLUGIN_API_VERSION + 1

    with pytest.raises(MXAsyncError, match="plugin API version 2; this mxasync implements version 1"):
        registry.register_backend(Future())


def test_example_plugin_device_storage_copies_streams_and_overrides(example_plugin):
    stats = example_plugin.STATS
    stats.clear()
    ctx = mx.Context("toy", 0)
    assert mx.device("toy", 0) == ctx and get_backend("toy").name == "toy_numpy"
    rs = np.random.RandomState(1)
    xv, wv, bv = (rs.randn(*s).astype(np.float32) for s in ((5, 3), (4, 3), (4,)))
    grads = {}
    for dev in (mx.cpu(), ctx):
        x, w, b = (mx.nd.array(v, ctx=dev) for v in (xv, wv, bv))
        for a in (x, w, b):
            a.attach_grad()
        with mx.autograd.record():
            h = mx.nd.relu(mx.nd.FullyConnected(x, w, b, num_hidden=4))
            loss = (mx.nd.Activation(h, act_type="tanh") + mx.nd.Activation(h, act_type="sigmoid")).sum()
        loss.backward()
        grads[dev.device_type] = [a.grad.asnumpy() for a in (x, w, b)] + [loss.asnumpy()]
        assert x.grad.context == dev
    for got, want in zip(grads["toy"], grads["cpu"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for op in ("relu", "relu.backward", "FullyConnected", "FullyConnected.backward", "Activation"):
        assert stats.get(op) == 1, (op, stats)  # sigmoid went back to the generic kernel
    assert stats["launch_compute"] >= 5  # ops ran on the toy device's streams
    # events only where something waited (the host reads): none per op, since one stream orders its ops
    assert 1 <= stats["event"] < stats["launch_compute"]
    assert stats["copy_from_host"] == 3  # mx.nd.array(v, ctx=toy) uploads through the device's copy hook
    stats.clear()
    big = mx.nd.ones((256, 256), ctx=mx.cpu())  # 256 KiB: the pooled storage, not numpy's small blocks
    on_toy = big.copyto(ctx)
    back = (on_toy * 2).as_in_context(mx.cpu())
    assert back.asnumpy().sum() == 2 * 256 * 256
    assert stats["copy_from_host"] == 1 and stats["copy_to_host"] == 1 and stats["alloc"] >= 2
    info = {b["name"]: b for b in mx.backends.list()}["toy_numpy"]
    assert info["serving"] and info["device_type"] == "toy" and info["state"] == "ready"


def test_example_plugin_in_a_fresh_process(plugin_site):
    """Entry-point discovery from PYTHONPATH alone: mx.Context('toy') is the first thing the script does."""
    code = ("import mxasync as mx; ctx = mx.Context('toy', 0); print((mx.nd.ones((2,), ctx=ctx) * 2).asnumpy());"
            "print([(b['name'], b['device_type'], b['serving']) for b in mx.backends.list() "
            "if b['name'] == 'toy_numpy'])")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin_site), root]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[:2] == ["[2. 2.]", "[('toy_numpy', 'toy', True)]"]


def test_arrays_of_a_plugin_device_save_as_cpu_arrays(clean_registry, tmp_path):
    _ctx_backend("contract_e")
    x = mx.nd.array([1.0, 2.0], ctx=mx.device("contract_e", 0))
    mx.nd.save(str(tmp_path / "x.params"), {"x": x})
    back = mx.nd.load(str(tmp_path / "x.params"))["x"]
    assert back.context == mx.cpu(0) and back.asnumpy().tolist() == [1.0, 2.0]


def test_setitem_across_devices_goes_through_the_devices_copies(example_plugin):
    """A slice of a cpu array set from a device array (and back) is a copy op through the backend's
    copy hooks, never a kernel reading the other device's memory (CuPy refuses that: issue 21)."""
    stats = example_plugin.STATS
    stats.clear()
    ctx = mx.Context("toy", 0)
    on_toy = mx.nd.array([[1.0, 2.0], [3.0, 4.0]], ctx=ctx)
    on_toy.wait_to_read()
    stats.clear()  # the upload above went through copy_from_host too
    host = mx.nd.zeros((3, 2))
    host[1:3] = on_toy
    assert host.asnumpy().tolist() == [[0, 0], [1, 2], [3, 4]]
    assert stats.get("copy_to_host") == 1
    dev = mx.nd.zeros((2, 2), ctx=ctx)
    dev[0:1] = mx.nd.array([[7.0, 8.0]])
    assert dev.asnumpy().tolist() == [[7, 8], [0, 0]]
    assert stats.get("copy_from_host") == 1


def test_register_override_is_the_same_seam_as_backend_overrides(clean_registry):
    from mxasync.operator import register_override
    from mxasync.operator import registry as op_registry

    b = _ctx_backend("contract_f", relu=lambda xp, params, x: xp.full_like(x, 7.0))
    register_override("relu", b.name, lambda xp, params, x: xp.full_like(x, 5.0))
    register_override("exp", b.name, lambda xp, params, x: xp.full_like(x, 3.0))
    try:
        x = mx.nd.array([1.0, -1.0], ctx=mx.device("contract_f"))
        assert mx.nd.relu(x).asnumpy().tolist() == [7.0, 7.0]  # the backend's own table wins
        assert mx.nd.exp(x).asnumpy().tolist() == [3.0, 3.0]
    finally:
        op_registry._OVERRIDES.pop(("relu", b.name))
        op_registry._OVERRIDES.pop(("exp", b.name))


def test_operator_code_reaches_the_numpy_backend_in_one_place():
    """The numpy backend's kernels reach the ops through the override seam: the operator layer imports the
    numpy backend in operator/numpy_overrides.py only, which registers them; no generic kernel imports it."""
    import pathlib

    root = pathlib.Path(mx.__file__).parent / "operator"
    importers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                       if "backends.numpy" in p.read_text() and "import" in p.read_text())
    assert importers == ["numpy_overrides.py"]


def test_the_numpy_backend_runs_the_ops_through_registered_overrides(clean_registry):
    """Convolution, pooling, BatchNorm, the dense ops and the optimizer updates on cpu contexts run the
    generic kernels with the numpy backend's runner, found by find_override like cuDNN's; other
    backends get the generic kernels with the plain runner."""
    from mxasync.backends import get_backend
    from mxasync.backends.numpy.kernels.runner import NUMPY
    from mxasync.operator import get_op
    from mxasync.operator.registry import find_override

    for op in ("Convolution", "Deconvolution", "Pooling", "BatchNorm", "FullyConnected", "dot", "batch_dot",
               "Activation", "LeakyReLU", "RNN", "UpSampling", "sgd_mom_update", "adam_update",
               "multi_sgd_mom_update", "multi_mp_sgd_update"):
        get_op(op)  # loads its family, which registers the overrides
        for device in ("cpu", "cpu_pinned", "cpu_shared"):
            fn = find_override(op, get_backend(device), None)
            assert fn is not None and fn.keywords == {"run": NUMPY}, (op, device)
    # the op's own kernels bound to a runner keep the generic contract: called as they are, no adapter between
    from mxasync.operator.overrides import adapt_backward, adapt_forward

    prop = get_op("Convolution").prepare(kernel=(3, 3), num_filter=2)
    fwd, bwd = (find_override(k, get_backend("cpu"), None) for k in ("Convolution", "Convolution.backward"))
    assert adapt_forward(type(prop), fwd) is fwd and adapt_backward(type(prop), bwd) is bwd
    toy = _ctx_backend("contract_runner")
    assert find_override("Convolution", toy, None) is None


class _OwnNamespace:
    """numpy under another identity, counting what the kernels ask of it: a backend's own ``xp``."""

    def __init__(self):
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1
        return getattr(np, name)


def test_a_backend_with_its_own_namespace_gets_the_heavy_ops(clean_registry):
    """Convolution, pooling, BatchNorm, FullyConnected, gelu and a momentum update, forward and backward, on a
    backend that brings only its ``xp``: the generic kernels (plain runner) give cpu's numbers (the numpy
    backend's overrides), through that namespace."""
    xp = _OwnNamespace()

    class Own(Backend):
        name, api_version, device_type = "dev_contract_own", PLUGIN_API_VERSION, "contract_own"

        def start(self):
            self.xp = xp

    registry.register_backend(Own())
    rng = np.random.default_rng(0)
    values = {"x": rng.standard_normal((4, 3, 10, 10)), "w": rng.standard_normal((8, 3, 3, 3)) * 0.3,
              "gamma": rng.random(8) + 0.5, "beta": rng.standard_normal(8), "fc": rng.standard_normal((5, 8 * 9)) * 0.1}

    def step(ctx):
        a = {k: mx.nd.array(v, ctx=ctx) for k, v in values.items()}
        mm, mv = mx.nd.zeros(8, ctx=ctx), mx.nd.ones(8, ctx=ctx)
        for k in ("w", "gamma", "beta", "fc"):
            a[k].attach_grad()
        with mx.autograd.record():
            h = mx.nd.Convolution(a["x"], a["w"], kernel=(3, 3), num_filter=8, pad=(1, 1), no_bias=True)
            h = mx.nd.BatchNorm(h, a["gamma"], a["beta"], mm, mv, fix_gamma=False)
            h = mx.nd.Pooling(mx.nd.LeakyReLU(h, act_type="gelu"), kernel=(3, 3), stride=(2, 2), pool_type="max")
            y = mx.nd.FullyConnected(mx.nd.Pooling(h, kernel=(2, 2), stride=(1, 1), pool_type="avg"), a["fc"],
                                     num_hidden=5, no_bias=True)
        y.backward(mx.nd.ones(y.shape, ctx=ctx))
        mom = mx.nd.zeros(a["w"].shape, ctx=ctx)
        w = mx.nd.sgd_mom_update(a["w"], a["w"].grad, mom, lr=0.1, momentum=0.9, wd=1e-3)
        return [t.asnumpy() for t in (y, a["w"].grad, a["gamma"].grad, a["beta"].grad, a["fc"].grad, w, mom)]

    for got, want in zip(step(mx.Context("contract_own", 0)), step(mx.cpu()), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert xp.calls.get("matmul", 0) >= 3  # the GEMMs went through the backend's namespace


def test_an_op_never_mixes_a_plugin_device_with_cpu(clean_registry):
    _ctx_backend("contract_g")
    dev = mx.nd.array([1.0, 2.0], ctx=mx.device("contract_g"))
    host = mx.nd.array([1.0, 2.0])
    for op in (lambda: dev + host, lambda: host * dev, lambda: mx.nd.dot(dev, host)):
        with pytest.raises(MXAsyncError, match=r"inputs live on different contexts \((contract_g\(0\) and cpu\(0\)|"
                                               r"cpu\(0\) and contract_g\(0\))\); copy them with as_in_context first"):
            op()
    assert (dev + host.as_in_context(dev.context)).asnumpy().tolist() == [2.0, 4.0]
    assert (host + mx.nd.ones((2,), ctx=mx.cpu_pinned())).asnumpy().tolist() == [2.0, 3.0]  # host memory mixes
