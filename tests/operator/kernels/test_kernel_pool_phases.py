"""Pooling's phase-grid path and cache blocks: against window loops and the strided-view path.

Integer-valued inputs put ties in most max windows, so a window handled at the wrong offset,
phase or shift, or a tie sent to any but the first maximum (row-major), changes the numbers.
"""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels import runner as R
from mxasync.operator.kernels.pooling import pooling, pooling_backward

P = importlib.import_module("mxasync.operator.kernels.pooling")

# (data shape, params): every geometry here has overlapping windows, so it takes the phase grid
OVERLAPPING = [
    ((2, 3, 11), dict(kernel=(3,), stride=(2,), pad=(1,))),
    ((2, 2, 10), dict(kernel=(4,), stride=(3,), pad=(2,), pooling_convention="full")),
    ((2, 3, 9, 11), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),  # ResNet's first pool, odd sizes
    ((2, 2, 8, 7), dict(kernel=(3, 2), stride=(1, 2), pad=(1, 0))),
    ((1, 3, 10, 9), dict(kernel=(4, 3), stride=(3, 2), pad=(1, 1), pooling_convention="full")),
    ((2, 2, 7, 8), dict(kernel=(3, 3), stride=(2, 2), pooling_convention="same")),
    ((2, 2, 6, 9), dict(kernel=(2, 3), stride=(1, 3), pad=(1, 1))),  # overlap along one axis only
    ((3, 2, 6, 6), dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1))),
    ((2, 2, 8, 8), dict(kernel=(3, 3), stride=(2, 2))),  # no padding, sizes that divide: no fill
    ((1, 2, 5, 6, 7), dict(kernel=(3, 2, 3), stride=(2, 2, 1), pad=(1, 0, 1), pooling_convention="full")),
]
# disjoint windows (LeNet's 2x2/2 and friends) keep strided views; max takes one axis at a time
DISJOINT = [
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 2, 7, 9), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 2, 7, 9), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 9, 8), dict(kernel=(3, 2), stride=(3, 3), pad=(1, 1))),
]
GEOMETRIES = OVERLAPPING + DISJOINT
TYPES = [
    dict(pool_type="max"),
    dict(pool_type="avg"),
    dict(pool_type="avg", count_include_pad=False),
    dict(pool_type="sum"),
]


def _ids(cases):
    return [f"{len(s) - 2}d-k{p['kernel']}-s{p['stride']}-p{p.get('pad')}-{p.get('pooling_convention', 'valid')}"
            for s, p in cases]


def _ties(rng, shape, dtype):
    return rng.integers(-2, 3, size=shape).astype(dtype)


def _geometry(shape, params):
    return P._geometry(np.empty(shape), params["kernel"], params["stride"], params.get("pad"), False,
                       params.get("pooling_convention", "valid"))


def max_pool_loops(x, head, params):
    """Max pooling forward and backward one window at a time, padded as MXNet pads (the lowest finite
    value): the gradient goes to the first element, in row-major order, equal to the window's max.
    NaNs never win (MXNet's running max starts at the lowest finite value and a NaN never compares
    greater), so a window of NaNs only gives that value and no gradient."""
    kernel, stride, before, after, osp = _geometry(x.shape, params)
    xpad = np.pad(x, ((0, 0), (0, 0)) + tuple(zip(before, after, strict=True)),
                  constant_values=np.finfo(x.dtype).min)
    out = np.empty(x.shape[:2] + osp, x.dtype)
    gpad = np.zeros(xpad.shape, head.dtype)
    for n, c in itertools.product(*map(range, x.shape[:2])):
        for pos in itertools.product(*map(range, osp)):
            corner = [p * s for p, s in zip(pos, stride, strict=True)]
            window = xpad[(n, c) + tuple(slice(a, a + k) for a, k in zip(corner, kernel, strict=True))]
            peak = np.fmax.reduce(window.reshape(-1), initial=np.finfo(x.dtype).min)
            out[(n, c) + pos] = peak
            hits = np.flatnonzero(window.reshape(-1) == peak)
            if hits.size:
                first = np.unravel_index(hits[0], kernel)
                gpad[(n, c) + tuple(a + f for a, f in zip(corner, first, strict=True))] += head[(n, c) + pos]
    inner = tuple(slice(b, b + d) for b, d in zip(before, x.shape[2:], strict=True))
    return out, gpad[(Ellipsis,) + inner]


@pytest.fixture
def strided(monkeypatch):
    """Run ``fn()`` with the phase grid turned off (strided views of the padded input everywhere)."""

    def run(fn):
        with monkeypatch.context() as m:
            m.setattr(P, "MAX_PHASE_GROWTH", 0.0)
            return fn()

    return run


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,params", GEOMETRIES, ids=_ids(GEOMETRIES))
def test_max_matches_window_loops_with_ties(shape, params, dtype, rng):
    x = _ties(rng, shape, dtype)
    head = rng.standard_normal(pooling(np, x, **params).shape).astype(dtype)
    assert P._phases_pay("max", shape, _geometry(shape, params)) == ((shape, params) in OVERLAPPING)
    want_out, want_grad = max_pool_loops(x, head, params)
    out = pooling(np, x, **params)
    np.testing.assert_array_equal(out, want_out)
    for given in (None, out):  # the backward recomputes the forward when not handed it
        grad = pooling_backward(np, head, x, out=given, **params)
        assert grad.dtype == dtype
        tol = 1e-6 if dtype == np.float32 else 1e-12  # the loops add overlapping windows in another order
        np.testing.assert_allclose(grad, want_grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", TYPES, ids=lambda t: "-".join(str(v) for v in t.values()))
@pytest.mark.parametrize("shape,params", OVERLAPPING, ids=_ids(OVERLAPPING))
def test_phase_grid_matches_strided_views(shape, params, kind, dtype, rng, strided):
    """Same adds and maxima in the same order: the two paths agree to the bit."""
    params = {**params, **kind}
    x = _ties(rng, shape, dtype)
    head = rng.standard_normal(pooling(np, x, **params).shape).astype(dtype)
    assert P._phases_pay(params["pool_type"], shape, _geometry(shape, params))
    np.testing.assert_array_equal(pooling(np, x, **params), strided(lambda: pooling(np, x, **params)))
    np.testing.assert_array_equal(pooling_backward(np, head, x, **params),
                                  strided(lambda: pooling_backward(np, head, x, **params)))


@pytest.mark.parametrize("shape,params", GEOMETRIES[2:4] + DISJOINT[:1], ids=_ids(GEOMETRIES[2:4] + DISJOINT[:1]))
def test_nans_are_skipped_as_mxnet_does(shape, params, rng, strided):
    x = _ties(rng, shape, np.float64)
    x[0, 0, 1, 2] = np.nan
    x[1, 1, :4, :4] = np.nan  # whole windows of NaNs: the lowest finite value, no gradient
    head = rng.standard_normal(pooling(np, x, **params).shape)
    want_out, want_grad = max_pool_loops(x, head, params)
    out = pooling(np, x, **params)
    assert not np.isnan(out).any() and (out == np.finfo(x.dtype).min).any()
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(out, strided(lambda: pooling(np, x, **params)))
    grad = pooling_backward(np, head, x, out=out, **params)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(grad, strided(lambda: pooling_backward(np, head, x, out=out, **params)))


@pytest.mark.parametrize("block", [1, 40, 150, 700])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape,params", [GEOMETRIES[2], DISJOINT[1]], ids=_ids([GEOMETRIES[2], DISJOINT[1]]))
def test_cache_blocks_give_the_same_numbers(shape, params, kind, block, rng, monkeypatch):
    """Blocks of single channels, channel runs, several images and uneven tails (scratch arrays reused
    across blocks of different sizes) agree with one block."""
    params = {**params, "pool_type": kind}
    x = _ties(rng, (5,) + shape[1:], np.float32)
    head = rng.standard_normal(pooling(np, x, **params).shape).astype(np.float32)
    whole = pooling(np, x, **params), pooling_backward(np, head, x, **params)  # the plain runner: one block
    monkeypatch.setattr(R, "BLOCK_ELEMENTS", block)
    blocked = pooling(np, x, run=R.NUMPY, **params), pooling_backward(np, head, x, run=R.NUMPY, **params)
    for got, want in zip(blocked, whole, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("block", [1, 7, 30, 64, 1000])
@pytest.mark.parametrize("b0,b1,c0,c1,plane", [(0, 5, 0, 7, 9), (2, 4, 3, 7, 16), (0, 1, 0, 1, 100)])
def test_cache_blocks_cover_every_image_and_channel_once(b0, b1, c0, c1, plane, block, monkeypatch):
    monkeypatch.setattr(R, "BLOCK_ELEMENTS", block)
    seen = np.zeros((b1, c1), int)
    for bb0, bb1, cc0, cc1 in R.NUMPY.cache_blocks(b0, b1, c0, c1, plane):
        assert (bb1 - bb0) * (cc1 - cc0) * plane <= block + plane  # about a block: at most one plane over
        seen[bb0:bb1, cc0:cc1] += 1
    assert (seen[b0:b1, c0:c1] == 1).all() and seen.sum() == (b1 - b0) * (c1 - c0)
