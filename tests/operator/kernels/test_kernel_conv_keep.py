"""Columns kept from a training forward for the weight gradient: same numbers, bounded memory."""

from __future__ import annotations

import functools
import gc

import numpy as np
import pytest

import mxasync as mx
from mxasync.backends.numpy.kernels.conv import _colstore
from mxasync.backends.numpy.kernels.conv import _core as _conv_core
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels.conv import convolution as _conv

# the numpy backend's override: the kernels with its runner (layouts, BLAS, kernel threads)
convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)

KW = dict(kernel=(3, 3), pad=(1, 1), num_filter=4)


@pytest.fixture
def store(monkeypatch):
    s = _colstore.ColumnStore(budget=1 << 20)
    monkeypatch.setattr(_conv_core, "COLUMNS", s)
    return s


def _data(rng):
    x = rng.standard_normal((2, 3, 6, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    dy = rng.standard_normal((2, 4, 6, 5))
    return x, w, dy


def test_backward_uses_and_returns_kept_columns(store, rng):
    x, w, dy = _data(rng)
    expected = convolution_backward(np, dy, x, w, **KW)
    convolution(np, x, w, None, keep=True, **KW)
    assert store.stats()["kept"] == 1
    got = convolution_backward(np, dy, x, w, **KW)
    assert store.stats()["kept"] == 0 and store.stats()["spare"] == 1
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    convolution(np, x, w, None, keep=True, **KW)  # the next forward reuses the spare buffer
    assert store.stats()["spare"] == 0 and store.held == x.size * 9 * 8


def test_kept_columns_are_what_backward_reads(store, rng):
    x, w, dy = _data(rng)
    convolution(np, x, w, None, keep=True, **KW)
    key = (id(x), _conv_core.col_geometry(x, (3, 3), (1, 1), (1, 1), (1, 1)))
    store._kept[key][1][...] = 0  # columns of zeros: the weight gradient must come out zero
    _, dw, _ = convolution_backward(np, dy, x, w, **KW)
    assert not dw.any()


def test_over_budget_keeps_nothing(store, rng):
    store.budget = 100
    x, w, dy = _data(rng)
    convolution(np, x, w, None, keep=True, **KW)
    assert store.stats()["kept"] == 0 and store.held == 0


def test_dead_input_frees_its_columns(store, rng):
    x, w, _ = _data(rng)
    convolution(np, x, w, None, keep=True, **KW)
    del x
    gc.collect()
    assert store.stats()["kept"] == 0 and store.stats()["spare"] == 1


def test_inference_forward_drops_stale_columns(store, rng):
    x, w, dy = _data(rng)
    convolution(np, x, w, None, keep=True, **KW)
    x[...] = rng.standard_normal(x.shape)  # new data in the same array, then an inference forward
    convolution(np, x, w, None, **KW)
    assert store.stats()["kept"] == 0
    _, dw, _ = convolution_backward(np, dy, x, w, **KW)
    store.budget = 0
    np.testing.assert_allclose(dw, convolution_backward(np, dy, x, w, **KW)[1])


def test_budget_from_env(monkeypatch):
    monkeypatch.setenv("MXASYNC_CONV_KEEP_MB", "0")
    assert _colstore.ColumnStore().budget == 0
    monkeypatch.setenv("MXASYNC_CONV_KEEP_MB", "1.5")
    assert _colstore.ColumnStore().budget == 3 << 19
    monkeypatch.delenv("MXASYNC_CONV_KEEP_MB")
    assert _colstore.ColumnStore().budget == 256 << 20


def test_executor_training_step_keeps_and_consumes(store, rng):
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv")
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    exe = net.simple_bind(mx.cpu(), data=x.shape)
    exe.arg_dict["data"][:] = x
    exe.arg_dict["conv_weight"][:] = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    exe.forward(is_train=True)
    mx.nd.waitall()
    assert store.stats()["kept"] == 1
    dy = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)
    exe.backward([mx.nd.array(dy)])
    mx.nd.waitall()
    assert store.stats()["kept"] == 0
    _, dw, db = convolution_backward(np, dy, x, exe.arg_dict["conv_weight"].asnumpy(), **KW)
    np.testing.assert_allclose(exe.grad_dict["conv_weight"].asnumpy(), dw, rtol=1e-4, atol=1e-4)
    exe.forward(is_train=False)
    mx.nd.waitall()
    assert store.stats()["kept"] == 0
