"""Deconvolution: forward against an explicit scatter loop, target_shape rules, numerical gradients."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mxasync.operator.kernels.conv.deconvolution import deconv_pad_adj, deconvolution, deconvolution_backward

# (data shape, num_filter, kernel, stride, dilate, pad, adj, num_group)
CASES = [
    ((2, 3, 4), 2, (3,), (1,), (1,), (0,), (0,), 1),
    ((2, 4, 4), 6, (3,), (3,), (2,), (1,), (2,), 2),
    ((1, 2, 3, 3), 3, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 3, 4), 6, (3, 2), (2, 2), (1, 1), (1, 0), (1, 1), 2),
    ((1, 2, 3, 2), 2, (2, 3), (1, 2), (2, 1), (0, 1), (0, 1), 1),
    ((1, 2, 2, 3, 2), 2, (2, 2, 2), (2, 1, 2), (1, 1, 1), (0, 1, 0), (1, 0, 0), 1),
]
IDS = [f"{len(c[2])}d-k{c[2]}-s{c[3]}-d{c[4]}-p{c[5]}-a{c[6]}-g{c[7]}" for c in CASES]


def deconv_reference(x, w, b, stride, dilate, pad, adj, groups):
    """Definition: every input element scatters weight * value into the (padded) output."""
    n, c = x.shape[:2]
    fg = w.shape[1]
    kernel = w.shape[2:]
    cg = c // groups
    full = [
        s * (i - 1) + d * (k - 1) + 1 + a
        for i, k, s, d, a in zip(x.shape[2:], kernel, stride, dilate, adj, strict=True)
    ]
    out = np.zeros((n, fg * groups, *full))
    for i, ci in itertools.product(range(n), range(c)):
        g = ci // cg
        for pos in itertools.product(*(range(s) for s in x.shape[2:])):
            for fo in range(fg):
                for tap in itertools.product(*(range(k) for k in kernel)):
                    idx = tuple(p * st + t * d for p, t, st, d in zip(pos, tap, stride, dilate, strict=True))
                    out[(i, g * fg + fo) + idx] += x[(i, ci) + pos] * w[(ci, fo) + tap]
    out = out[(Ellipsis,) + tuple(slice(p, f - p) for p, f in zip(pad, full, strict=True))]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(kernel))
    return out


def _make(rng, case, dtype):
    shape, f, kernel, stride, dilate, pad, adj, groups = case
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], f // groups, *kernel)).astype(dtype)
    b = rng.standard_normal(f).astype(dtype)
    kw = dict(
        kernel=kernel, stride=stride, dilate=dilate, pad=pad, adj=adj, num_filter=f, num_group=groups, no_bias=False
    )
    return x, w, b, kw


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_scatter_loop(case, dtype, rng, check):
    x, w, b, kw = _make(rng, case, dtype)
    out = deconvolution(np, x, w, b, **kw)
    assert out.dtype == dtype
    f64 = [a.astype(np.float64) for a in (x, w, b)]
    ref = deconv_reference(*f64, kw["stride"], kw["dilate"], kw["pad"], kw["adj"], kw["num_group"])
    check.close(out, ref, dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_matches_numerical(case, rng, check):
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(deconvolution(np, x, w, b, **kw).shape)
    dx, dw, db = deconvolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: deconvolution(np, v, w, b, **kw), x, head, dx, "data")
    check.grad(lambda v: deconvolution(np, x, v, b, **kw), w, head, dw, "weight")
    check.grad(lambda v: deconvolution(np, x, w, v, **kw), b, head, db, "bias")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_float32(case, rng, check):
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(deconvolution(np, x, w, b, **kw).shape)
    f32 = [a.astype(np.float32) for a in (head, x, w)]
    pairs = zip(deconvolution_backward(np, *f32, **kw), deconvolution_backward(np, head, x, w, **kw), strict=True)
    for got, exp in pairs:
        assert got.dtype == np.float32
        check.close(got, exp, np.float32)


def test_default_no_bias_is_true(rng):
    x, w, b, kw = _make(rng, CASES[2], np.float64)
    kw.pop("no_bias")
    np.testing.assert_array_equal(deconvolution(np, x, w, b, **kw), deconvolution(np, x, w, None, **kw))
    assert deconvolution_backward(np, np.ones((1, 3, 6, 6)), x, w, **kw)[2] is None


@pytest.mark.parametrize(
    "target,pad,adj,shape",
    [
        ((10, 10), (1, 1), (1, 1), (10, 10)),
        ((9, 9), (1, 1), (0, 0), (9, 9)),
        ((8, 11), (2, 0), (1, 0), (8, 11)),
        ((0, 0), (0, 0), (0, 0), (11, 11)),
    ],
)
def test_target_shape_sets_pad_and_adj(target, pad, adj, shape, rng):
    """MXNet: excess = full - target, pad = ceil(excess/2), adj = excess % 2; explicit pad/adj are ignored."""
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 1, 3, 3))
    got = deconv_pad_adj((5, 5), (3, 3), (2, 2), (1, 1), (3, 3), (1, 1), target)
    if any(target):
        assert got == (pad, adj)
    out = deconvolution(np, x, w, None, (3, 3), stride=(2, 2), pad=(3, 3) if any(target) else None, target_shape=target)
    assert out.shape[2:] == shape
    if any(target):
        ref = deconvolution(np, x, w, None, (3, 3), stride=(2, 2), pad=pad, adj=adj)
        np.testing.assert_array_equal(out, ref)


def test_target_shape_too_big(rng):
    with pytest.raises(ValueError, match="too big"):
        deconv_pad_adj((5, 5), (3, 3), (2, 2), (1, 1), (0, 0), None, (12, 12))
