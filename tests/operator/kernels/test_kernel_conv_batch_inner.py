"""The batch-inner convolution layout (one GEMM per batch): same numbers as the per-sample layout."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.operator.kernels import _colstore, _conv_batch_inner, _conv_core, convolution, convolution_backward

from .test_kernel_conv import CASES, IDS, _make, conv_reference

UNIT_STRIDE = [(c, i) for c, i in zip(CASES, IDS, strict=True) if all(s == 1 for s in c[3])]


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


def test_layout_chosen_for_small_planes_and_big_batches():
    four = np.dtype(np.float32).itemsize
    lenet_conv2 = (64, (8, 8), (1, 1), 64 * 500 * 64 * four)
    lenet_conv1 = (64, (24, 24), (1, 1), 64 * 25 * 576 * four)
    resnet_conv = (8, (56, 56), (1, 1), 8 * 576 * 3136 * four)
    assert _conv_batch_inner.pays(*lenet_conv2)
    assert not _conv_batch_inner.pays(*lenet_conv1)
    assert not _conv_batch_inner.pays(*resnet_conv)
    assert not _conv_batch_inner.pays(64, (8, 8), (2, 2), 1000)  # strided windows: short runs again
    assert not _conv_batch_inner.pays(64, (8, 8), (1, 1), _conv_batch_inner.MAX_COLUMN_BYTES + 1)


@pytest.mark.parametrize("case", [c for c, _ in UNIT_STRIDE], ids=[i for _, i in UNIT_STRIDE])
def test_forward_matches_loops(case, rng, check, forced):
    x, w, b, kw = _make(rng, case, np.float64)
    out = convolution(np, x, w, b, **kw)
    assert forced, "the batch-inner path did not run"
    check.close(out, conv_reference(x, w, b, kw["stride"], kw["dilate"], kw["pad"], kw["num_group"]))


@pytest.mark.parametrize("case", [c for c, _ in UNIT_STRIDE], ids=[i for _, i in UNIT_STRIDE])
def test_backward_matches_numerical(case, rng, check, forced):
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx, dw, db = convolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")
    check.grad(lambda v: convolution(np, x, v, b, **kw), w, head, dw, "weight")


def test_chosen_by_itself_and_agrees_with_per_sample(rng, check, monkeypatch):
    """A LeNet-like geometry takes the path on its own; the per-sample layout gives the same numbers."""
    x = rng.standard_normal((32, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    kw = dict(kernel=(3, 3), num_filter=5)
    head = rng.standard_normal((32, 5, 4, 4)).astype(np.float32)
    calls = []
    real = _conv_batch_inner.data_grad
    monkeypatch.setattr(_conv_batch_inner, "data_grad", lambda *a: calls.append(1) or real(*a))
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
