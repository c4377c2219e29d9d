"""The batch-inner convolution layout (one GEMM per batch): same numbers as the per-sample layout."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _batch_inner as _conv_batch_inner
from mxasync.backends.numpy.kernels.conv import _colstore
from mxasync.backends.numpy.kernels.conv import _core as _conv_core
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels.conv import convolution as _conv

from .test_kernel_conv import CASES, IDS, _make, conv_reference

# the numpy backend's override: the kernels with its runner (layouts, BLAS, kernel threads)
convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)

EVERY = list(zip(CASES, IDS, strict=True))


@pytest.fixture
def forced(monkeypatch):
    """Every numpy convolution through the batch-inner path."""
    calls = []
    real = _conv_batch_inner.forward

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: True)
    monkeypatch.setattr(_conv_batch_inner, "forward", counted)
    return calls


def test_layout_chosen_for_small_planes():
    four = np.dtype(np.float32).itemsize

    def pays(n, c, k, osp, stride):
        return _conv_batch_inner.pays(c * k * k, (osp, osp), (stride, stride), n * c * k * k * osp * osp * four)

    assert pays(64, 20, 5, 8, 1)  # LeNet's conv2
    assert not pays(64, 1, 5, 24, 1)  # LeNet's conv1: C*K of 25
    assert pays(8, 512, 3, 7, 1) and pays(8, 256, 3, 7, 2) and pays(8, 128, 3, 28, 1)  # ResNet-18's later stages
    assert not pays(8, 64, 3, 56, 1)  # ResNet-18's first stage
    assert not pays(8, 64, 3, 28, 2)  # strided windows on a 28x28 plane: runs of N
    assert not _conv_batch_inner.pays(500, (8, 8), (1, 1), _conv_batch_inner.MAX_COLUMN_BYTES + 1)


@pytest.mark.parametrize("case", [c for c, _ in EVERY], ids=[i for _, i in EVERY])
def test_forward_matches_loops(case, rng, check, forced):
    x, w, b, kw = _make(rng, case, np.float64)
    out = convolution(np, x, w, b, **kw)
    assert forced, "the batch-inner path did not run"
    check.close(out, conv_reference(x, w, b, kw["stride"], kw["dilate"], kw["pad"], kw["num_group"]))


@pytest.mark.parametrize("case", [c for c, _ in EVERY], ids=[i for _, i in EVERY])
def test_backward_matches_numerical(case, rng, check, forced):
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx, dw, db = convolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")
    check.grad(lambda v: convolution(np, x, v, b, **kw), w, head, dw, "weight")


def test_chosen_by_itself_and_agrees_with_per_sample(rng, check, monkeypatch, spy):
    """A LeNet-like geometry takes the path on its own; the per-sample layout gives the same numbers."""
    x = rng.standard_normal((32, 8, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 8, 3, 3)).astype(np.float32)
    kw = dict(kernel=(3, 3), num_filter=5)
    head = rng.standard_normal((32, 5, 4, 4)).astype(np.float32)
    calls = spy(_conv_batch_inner, "data_grad")
    inner = convolution(np, x, w, None, **kw), *convolution_backward(np, head, x, w, no_bias=True, **kw)[:2]
    assert calls
    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: False)
    per_sample = convolution(np, x, w, None, **kw), *convolution_backward(np, head, x, w, no_bias=True, **kw)[:2]
    for a, e in zip(inner, per_sample, strict=True):
        check.close(a, e, np.float32)


def test_training_forward_keeps_columns_for_the_weight_gradient(rng, monkeypatch, forced):
    store = _colstore.ColumnStore(budget=1 << 20)
    monkeypatch.setattr(_conv_core, "COLUMNS", store)
    x, w, b, kw = _make(rng, CASES[2], np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    expected = convolution_backward(np, head, x, w, **kw)
    convolution(np, x, w, b, keep=True, **kw)
    assert store.stats()["kept"] == 1
    got = convolution_backward(np, head, x, w, **kw)
    assert store.stats()["kept"] == 0
    for a, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12)
    convolution(np, x, w, b, keep=True, **kw)
    key = next(iter(store._kept))
    store._kept[key][1][...] = 0  # zero columns: the weight gradient read them, so it comes out zero
    assert not convolution_backward(np, head, x, w, **kw)[1].any()


def test_columns_kept_in_the_other_layout_are_recomputed(rng, check, monkeypatch):
    """Columns a per-sample forward kept (N, C, ...) are not read as batch-inner ones (C, ..., N), even
    when N == C makes their first axes look alike."""
    store = _colstore.ColumnStore(budget=1 << 24)
    monkeypatch.setattr(_conv_core, "COLUMNS", store)
    x = rng.standard_normal((8, 8, 6, 6))
    w = rng.standard_normal((5, 8, 3, 3))
    kw = dict(kernel=(3, 3), num_filter=5, no_bias=True)
    head = rng.standard_normal((8, 5, 4, 4))
    expected = convolution_backward(np, head, x, w, **kw)[1]
    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: False)
    convolution(np, x, w, None, keep=True, **kw)
    assert store.stats()["kept"] == 1
    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: True)
    check.close(convolution_backward(np, head, x, w, **kw)[1], expected)


def test_unit_stride_planes_above_16x16_split_the_layouts(rng, check, monkeypatch):
    """On a 20x20 unit-stride plane the forward and the data gradient run over shifted views, the weight
    gradient batch-inner (its columns rebuilt in a buffer of the store, given back after): the numbers of
    the per-sample layout."""
    from mxasync.backends.numpy.kernels.conv import _shifted as _conv_shifted

    store = _colstore.ColumnStore(budget=1 << 24)
    monkeypatch.setattr(_conv_core, "COLUMNS", store)
    x = rng.standard_normal((4, 16, 20, 20))
    w = rng.standard_normal((16, 16, 3, 3))
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)
    head = rng.standard_normal((4, 16, 20, 20))
    calls = []
    for module, name in ((_conv_shifted, "forward"), (_conv_batch_inner, "weight_grad"),
                         (_conv_batch_inner, "data_grad"), (_conv_batch_inner, "forward")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    got = convolution(np, x, w, None, keep=True, **kw), *convolution_backward(np, head, x, w, **kw)[:2]
    assert calls == ["forward", "forward", "weight_grad"]  # the forward, the flipped correlation, the weights
    assert store.stats()["kept"] == 0 and store.stats()["spare"] == 1
    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: False)
    monkeypatch.setattr(_conv_shifted, "MIN_CHANNELS", 10**9)
    per_sample = convolution(np, x, w, None, **kw), *convolution_backward(np, head, x, w, **kw)[:2]
    for a, e in zip(got, per_sample, strict=True):
        check.close(a, e, np.float64)
