"""Issue 25, item 5a: identical forward+backward passes on CPU give identical bits: depthwise and
grouped convolutions and BatchNorm in training and inference mode, imperative and hybridized.

The cause found: the numpy backend cut a big kernel into chunks only while a core was idle, and
a chunk's result may differ in its last bits from the whole (numpy sums a one-channel slice of a
BatchNorm input in another order), so the bits followed the machine's load; BatchNorm's backward
in training mode cancels most of a gradient and left percents of difference (MobileNet: outputs
by 6e-6, gradients by up to 3% of their largest value). The cut is now a function of the shape
and the configured thread count only; the load decides only who runs the chunks. The load is
simulated here (``pressure.runnable_elsewhere``), and the thread count set to 8 as on the
reporter's bigger machine, so the test does not depend on this machine's timing or cores."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon
from mxasync.backends.numpy import blas, parallel, pressure
from mxasync.backends.numpy.kernels.runner import NUMPY

pytestmark = pytest.mark.fault

_IDLE, _BUSY = (lambda: 0), (lambda: 64)


@pytest.fixture
def eight_threads(monkeypatch):
    """Kernels big enough to split here, cut for 8 threads, with the helpers running (CHECK_LOAD on)."""
    monkeypatch.setattr(parallel, "_NTHREADS", 8)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 4096)
    monkeypatch.setattr(parallel, "_cores", lambda: 8)


def _net(hybrid: bool):
    mx.random.seed(7)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.BatchNorm(), gluon.nn.Conv2D(16, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
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


def _assert_same_bits(first, again):
    for k, (a, b) in enumerate(zip(first, again, strict=True)):
        assert a.tobytes() == b.tobytes(), f"array {k}: up to {np.abs(a - b).max()} apart"


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("train", [True, False], ids=["bn_train", "bn_inference"])
def test_passes_on_an_idle_and_a_busy_machine_give_identical_bits(eight_threads, monkeypatch, hybrid, train):
    x = mx.nd.array(np.random.RandomState(0).randn(8, 3, 16, 16).astype(np.float32))
    monkeypatch.setattr(pressure, "runnable_elsewhere", _IDLE)
    first = _pass(hybrid, train, x)
    monkeypatch.setattr(pressure, "runnable_elsewhere", _BUSY)
    _assert_same_bits(first, _pass(hybrid, train, x))
    monkeypatch.setattr(pressure, "runnable_elsewhere", _IDLE)
    _assert_same_bits(first, _pass(hybrid, train, x))


@pytest.mark.parametrize("shape", [(8, 3, 32, 32), (8, 16, 20, 20)], ids=["3ch", "16ch"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "inference"])
def test_batchnorm_kernel_bits_do_not_follow_the_load(eight_threads, monkeypatch, shape, train):
    import importlib

    bnk = importlib.import_module("mxasync.operator.kernels.batch_norm")
    rng = np.random.RandomState(1)
    x = (rng.randn(*shape) * 3 + 1).astype(np.float32)
    c = shape[1]
    gamma, beta = rng.rand(c).astype(np.float32) + 0.5, rng.randn(c).astype(np.float32)
    mm, mv = rng.randn(c).astype(np.float32), rng.rand(c).astype(np.float32) + 0.5
    dy = rng.randn(*shape).astype(np.float32)

    def run():
        out, mean, invstd = bnk.batch_norm(np, x, gamma, beta, mm, mv, fix_gamma=False, training=train, run=NUMPY)
        return [out, mean, invstd, *bnk.batch_norm_backward(np, dy, x, gamma, mean, invstd, fix_gamma=False,
                                                            training=train, run=NUMPY)]

    monkeypatch.setattr(pressure, "runnable_elsewhere", _IDLE)
    idle = run()
    monkeypatch.setattr(pressure, "runnable_elsewhere", _BUSY)
    _assert_same_bits(idle, run())


def test_a_busy_machine_cuts_alike_and_runs_every_chunk_in_the_calling_thread(eight_threads, monkeypatch):
    def no_helpers():
        raise AssertionError("a chunk was handed to a helper thread while no core was idle")

    monkeypatch.setattr(pressure, "runnable_elsewhere", _BUSY)
    monkeypatch.setattr(parallel, "_pool", no_helpers)
    assert parallel.worth_splitting(1 << 20)
    seen = []
    parallel.split(lambda lo, hi: seen.append((lo, hi)), 32)
    assert seen == parallel._bounds(32, 16)  # the cut of an idle machine, in order


@pytest.mark.skipif(not blas.available(), reason="the engine's private BLAS (scipy-openblas32) is not installed")
def test_private_blas_bits_do_not_follow_its_block_count_or_the_load(eight_threads, monkeypatch):
    """The engine's BLAS cuts a big GEMM into one block of columns, rows or batch entries a thread, never along
    the summed axis, so its bits must not change with the count or with who runs the blocks (the layouts of
    convolution's GEMMs: depthwise, grouped, pointwise, weight gradients)."""
    monkeypatch.setattr(blas, "ONE_THREAD_WORK", 0)
    rng = np.random.RandomState(0)
    cases = [((32, 1, 9), (4, 32, 9, 784)), ((4, 32, 1, 784), (4, 32, 9, 784)), ((64, 32), (4, 32, 784)),
             ((1, 3136), (3136, 64)), ((64, 3136), (3136, 1)), ((96, 288), (288, 784)), ((784, 288), (288, 96))]
    for sa, sb in cases:
        a, b = rng.randn(*sa).astype(np.float32), rng.randn(*sb).astype(np.float32)
        if sa[-2] == 1 and len(sa) == 4:
            b = b.swapaxes(-1, -2)  # a transposed operand, as the weight gradient passes its columns
        results = set()
        for threads, load in ((1, _IDLE), (2, _IDLE), (3, _IDLE), (8, _IDLE), (8, _BUSY)):
            monkeypatch.setattr(blas, "_threads", threads)
            monkeypatch.setattr(pressure, "runnable_elsewhere", load)
            results.add(blas.matmul(a, b).tobytes())
        assert len(results) == 1, f"{sa} @ {sb}: bits change with the block count or the load"


@pytest.mark.parametrize("geometry", [(4, 16, 20, 16, 3, 1, 16), (4, 16, 20, 16, 3, 2, 16), (4, 8, 16, 16, 3, 2, 4),
                                      (4, 16, 12, 32, 1, 1, 1), (4, 3, 32, 16, 3, 2, 1)],
                         ids=["depthwise", "depthwise_s2", "grouped", "pointwise", "first_layer"])
def test_convolution_bits_do_not_depend_on_the_column_budget(monkeypatch, geometry):
    """A training forward keeps its im2col columns only while ``MXASYNC_CONV_KEEP_MB`` has room, which
    depends on what other layers hold at that moment: the forward and weight gradient computed from
    kept columns must give the bits of those computed chunk by chunk."""
    from mxasync.backends.numpy.kernels.conv._colstore import COLUMNS
    from mxasync.operator.kernels.conv.convolution import convolution, convolution_backward

    n, c, s, f, k, st, g = geometry
    rng = np.random.RandomState(2)
    x, w = rng.randn(n, c, s, s).astype(np.float32), rng.randn(f, c // g, k, k).astype(np.float32)
    conv = dict(kernel=(k, k), stride=(st, st), pad=((k - 1) // 2,) * 2, num_filter=f, num_group=g, no_bias=True)
    results = []
    for budget in (0, 1 << 30):
        COLUMNS.clear()
        monkeypatch.setattr(COLUMNS, "budget", budget)
        y = convolution(np, x, w, None, keep=True, run=NUMPY, **conv)
        dy = np.random.RandomState(3).randn(*y.shape).astype(np.float32)
        results.append([y, *convolution_backward(np, dy, x, w, run=NUMPY, **conv)[:2]])
    COLUMNS.clear()
    _assert_same_bits(*results)
