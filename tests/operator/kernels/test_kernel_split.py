"""Kernels split over the numpy backend's kernel threads give the same bits as one call (issue 25, 5a: so results
do not depend on ``MXASYNC_KERNEL_THREADS`` either)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy import parallel
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels import activation as _act
from mxasync.operator.kernels import batch_norm as _bn
from mxasync.operator.kernels import pooling as _pool
from mxasync.operator.kernels import softmax as _softmax
from mxasync.operator.kernels.conv import convolution as _conv

# the kernels as the numpy backend's overrides run them (its runner splits them over its kernel threads)
activation, activation_backward = (functools.partial(f, run=NUMPY) for f in (_act.activation, _act.activation_backward))
batch_norm, batch_norm_backward = (functools.partial(f, run=NUMPY) for f in (_bn.batch_norm, _bn.batch_norm_backward))
convolution, convolution_backward = (functools.partial(f, run=NUMPY)
                                     for f in (_conv.convolution, _conv.convolution_backward))
pooling, pooling_backward = (functools.partial(f, run=NUMPY) for f in (_pool.pooling, _pool.pooling_backward))
log_softmax, log_softmax_backward = (functools.partial(f, run=NUMPY)
                                     for f in (_softmax.log_softmax, _softmax.log_softmax_backward))


def both(monkeypatch, fn):
    """``fn()`` unsplit, then with every kernel split over 3 threads (and chunks down to one element)."""
    monkeypatch.setattr(parallel, "_NTHREADS", 1)
    one = fn()
    monkeypatch.setattr(parallel, "_NTHREADS", 3)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(parallel, "CHECK_LOAD", False)
    return one, fn()


def same(a, b):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True):
        if x is None:
            assert y is None
        else:
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes(), f"up to {np.abs(x - y).max()} apart (or a zero's sign)"


@pytest.mark.parametrize("shape,kw", [
    ((3, 5, 9, 8), dict(kernel=(3, 3), pad=(1, 1), num_filter=4)),
    ((2, 1, 10, 10), dict(kernel=(5, 5), num_filter=3)),  # one channel: split by batch
    ((2, 4, 9, 9), dict(kernel=(3, 3), stride=(2, 2), num_filter=6, num_group=2)),
    ((6, 8, 6, 6), dict(kernel=(3, 3), pad=(1, 1), num_filter=5)),  # small planes: the batch-inner layout
    ((6, 8, 9, 9), dict(kernel=(3, 3), stride=(2, 2), num_filter=4, num_group=2)),  # ... strided, grouped
    ((2, 16, 36, 34), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16)),  # data gradient by phases
    ((2, 16, 20, 20), dict(kernel=(3, 3), pad=(1, 1), num_filter=16)),  # shifted forward, batch-inner weights
])
def test_convolution(monkeypatch, rng, shape, kw):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((kw["num_filter"], shape[1] // kw.get("num_group", 1)) + kw["kernel"])
    b = rng.standard_normal(kw["num_filter"])
    dy = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    same(*both(monkeypatch, lambda: convolution(np, x, w, b, **kw)))
    same(*both(monkeypatch, lambda: convolution_backward(np, dy, x, w, **kw)))


@pytest.mark.parametrize("kw", [
    dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pool_type="max"),  # overlapping windows, no pad: zeros keep their sign
    dict(kernel=(3, 3), stride=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"),
    dict(kernel=(2, 2), stride=(2, 2), pool_type="sum"),
])
def test_pooling(monkeypatch, rng, kw):
    x = np.maximum(rng.standard_normal((2, 5, 8, 8)), 0)  # relu'd: ties in max windows
    dy = rng.standard_normal(pooling(np, x, **kw).shape)
    same(*both(monkeypatch, lambda: pooling(np, x, **kw)))
    same(*both(monkeypatch, lambda: pooling_backward(np, dy, x, **kw)))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,axis", [
    ((8, 7, 3, 3), 1),  # a batch of 8: numpy sums 8 or more values of a one-channel column pairwise, a wider block row by row
    ((1, 3, 91, 91), 1),  # one image, planes over einsum's 8192-element buffer: a one-channel block is one lone row
    ((4, 6, 5, 3), -1),  # channel-last: a plane per pixel, 120 of them per channel
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm(monkeypatch, rng, training, shape, axis, dtype):
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    c = shape[axis]
    g, b = rng.standard_normal(c) + 2, rng.standard_normal(c)
    mm, mv = rng.standard_normal(c), rng.random(c) + 0.5
    fwd = both(monkeypatch, lambda: batch_norm(np, x, g, b, mm, mv, fix_gamma=False, training=training, axis=axis))
    same(*fwd)
    _, mean, invstd = fwd[0]
    same(*both(monkeypatch, lambda: batch_norm_backward(np, dy, x, g, mean, invstd, fix_gamma=False,
                                                         training=training, axis=axis)))


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_activation_into(monkeypatch, rng, act):
    x, dy = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 4, 5))
    same(*both(monkeypatch, lambda: activation(np, x, act, out=np.empty_like(x))))
    y = activation(np, x, act)
    same(*both(monkeypatch, lambda: activation_backward(np, dy, y, act, into=np.empty_like(x))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_by_blocks_of_rows(monkeypatch, rng, dtype):
    """Blocks of rows (a few rows each here), split over threads or not, give the bits of the whole-array formula."""
    from mxasync.backends.numpy.kernels import runner

    x, dy = rng.standard_normal((37, 5, 90)).astype(dtype), rng.standard_normal((37, 5, 90)).astype(dtype)
    shifted = x - x.max(axis=-1, keepdims=True)
    want = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    monkeypatch.setattr(runner, "ROW_BLOCK_ELEMENTS", 200)  # two rows a block
    one, split = both(monkeypatch, lambda: log_softmax(np, x))
    same(one, want)
    same(one, split)
    want_grad = dy - np.exp(want) * dy.sum(axis=-1, keepdims=True)
    one, split = both(monkeypatch, lambda: log_softmax_backward(np, dy, want))
    same(one, want_grad)
    same(one, split)
