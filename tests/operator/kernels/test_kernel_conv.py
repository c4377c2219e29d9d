"""Convolution and im2col/col2im: forward against explicit loops, backward against central differences."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _core as _conv_core
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels._runner import PLAIN
from mxasync.operator.kernels.conv import convolution as _conv
from mxasync.operator.kernels.conv.im2col import col2im, im2col

# the numpy backend's override: the kernels with its runner (layouts, BLAS, kernel threads)
convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)
RUNNERS = {"plain": PLAIN, "numpy": NUMPY}  # what every backend runs; what the numpy backend's overrides run


@pytest.fixture(params=list(RUNNERS))
def conv(request):
    """The forward and backward kernels with one runner."""
    run = RUNNERS[request.param]
    return functools.partial(_conv.convolution, run=run), functools.partial(_conv.convolution_backward, run=run)

# (data shape, num_filter, kernel, stride, dilate, pad, num_group)
CASES = [
    ((2, 3, 7), 4, (3,), (1,), (1,), (0,), 1),
    ((2, 4, 9), 6, (2,), (2,), (2,), (1,), 2),
    ((2, 3, 6, 5), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 7, 6), 6, (3, 2), (2, 1), (1, 2), (1, 0), 2),
    ((2, 6, 5, 5), 6, (2, 2), (2, 2), (1, 1), (0, 1), 3),
    ((1, 4, 5, 5), 4, (3, 3), (1, 1), (1, 1), (1, 1), 4),  # depthwise
    ((1, 4, 8, 7), 2, (3, 2), (1, 1), (2, 1), (1, 1), 2),  # unit stride: data grad by flipped correlation
    ((1, 2, 4, 5, 4), 3, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 1),
]
IDS = [f"{len(c[2])}d-k{c[2]}-s{c[3]}-d{c[4]}-p{c[5]}-g{c[6]}" for c in CASES]


def conv_reference(x, w, b, stride, dilate, pad, groups):
    """Direct definition: one explicit loop per output element and kernel tap."""
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    kernel = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    osp = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, st, d, p in zip(x.shape[2:], kernel, stride, dilate, pad, strict=True)
    ]
    out = np.zeros((n, f, *osp))
    fg = f // groups
    for i, o in itertools.product(range(n), range(f)):
        g = o // fg
        for pos in itertools.product(*(range(s) for s in osp)):
            acc = 0.0 if b is None else b[o]
            for ci in range(cg):
                for tap in itertools.product(*(range(k) for k in kernel)):
                    idx = tuple(p * st + t * d for p, t, st, d in zip(pos, tap, stride, dilate, strict=True))
                    acc += w[(o, ci) + tap] * xp[(i, g * cg + ci) + idx]
            out[(i, o) + pos] = acc
    return out


def _make(rng, case, dtype):
    shape, f, kernel, stride, dilate, pad, groups = case
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((f, shape[1] // groups, *kernel)).astype(dtype)
    b = rng.standard_normal(f).astype(dtype)
    kw = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=f, num_group=groups)
    return x, w, b, kw


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_loops(case, dtype, rng, check, conv):
    convolution = conv[0]
    x, w, b, kw = _make(rng, case, dtype)
    out = convolution(np, x, w, b, **kw)
    assert out.dtype == dtype
    ref = conv_reference(
        x.astype(np.float64),
        w.astype(np.float64),
        b.astype(np.float64),
        kw["stride"],
        kw["dilate"],
        kw["pad"],
        kw["num_group"],
    )
    check.close(out, ref, dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_matches_numerical(case, rng, check, conv):
    convolution, convolution_backward = conv
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx, dw, db = convolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")
    check.grad(lambda v: convolution(np, x, v, b, **kw), w, head, dw, "weight")
    check.grad(lambda v: convolution(np, x, w, v, **kw), b, head, db, "bias")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_float32(case, rng, check, conv):
    convolution, convolution_backward = conv
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    f32 = [a.astype(np.float32) for a in (head, x, w)]
    for got, exp in zip(convolution_backward(np, *f32, **kw), convolution_backward(np, head, x, w, **kw), strict=True):
        assert got.dtype == np.float32
        check.close(got, exp, np.float32)


def test_no_bias_and_partial_grads(rng, check):
    x, w, b, kw = _make(rng, CASES[2], np.float64)
    out = convolution(np, x, w, b, no_bias=True, **kw)
    check.close(out, convolution(np, x, w, None, **kw))
    dx, dw, db = convolution_backward(np, out, x, w, no_bias=True, need_weight_grad=False, **kw)
    assert dx is not None and dw is None and db is None


def test_chunked_batches_agree(rng, check, monkeypatch):
    """Tiny chunks (one sample each) must give the same numbers as one big chunk."""
    x, w, b, kw = _make(rng, CASES[3], np.float64)
    x = np.concatenate([x, x * 2, -x])
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    whole = convolution(np, x, w, b, **kw), *convolution_backward(np, head, x, w, **kw)
    monkeypatch.setattr(_conv_core, "CHUNK_BYTES", 1)
    chunked = convolution(np, x, w, b, **kw), *convolution_backward(np, head, x, w, **kw)
    for a, e in zip(chunked, whole, strict=True):
        check.close(a, e)


def test_layout_must_be_channels_first(rng):
    x, w, b, kw = _make(rng, CASES[2], np.float64)
    with pytest.raises(NotImplementedError, match="NHWC"):
        convolution(np, x, w, b, layout="NHWC", **kw)


@pytest.mark.parametrize("kernel,stride,dilate,pad", [((2, 2), None, None, None), ((3, 2), (2, 1), (1, 2), (1, 1))])
def test_im2col_col2im_are_adjoint(kernel, stride, dilate, pad, rng, check):
    """<im2col(x), c> == <x, col2im(c)>, and im2col's columns match a loop."""
    x = rng.standard_normal((2, 3, 6, 5))
    cols = im2col(np, x, kernel, stride, dilate, pad)
    c = rng.standard_normal(cols.shape)
    back = col2im(np, c, x.shape[2:], kernel, stride, dilate, pad)
    assert back.shape == x.shape
    check.close(np.sum(cols * c), np.sum(x * back))
    # column j of image 0 is the flattened (C, kh, kw) window of output position j
    w = np.zeros((1, 3) + kernel)
    w.reshape(-1)[5] = 1.0
    direct = convolution(np, x, w, None, kernel, stride, dilate, pad, no_bias=True)
    check.close(cols[:, 5, :], direct.reshape(2, -1))
