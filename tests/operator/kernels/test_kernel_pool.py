"""Pooling: forward against explicit window loops, backward against central differences and tie rules."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mxasync.operator.kernels.pooling import pool_out_size, pooling, pooling_backward

# (data shape, params)
CASES = [
    ((2, 2, 7), dict(kernel=(3,), stride=(2,), pool_type="max")),
    ((2, 2, 10), dict(kernel=(3,), stride=(3,), pad=(1,), pool_type="max", pooling_convention="full")),
    ((2, 2, 6, 7), dict(kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full")),
    ((1, 3, 5, 6), dict(kernel=(2, 3), stride=(1, 2), pad=(1, 1), pool_type="max")),
    ((2, 2, 6, 7), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", pooling_convention="full")),
    (
        (2, 2, 6, 7),
        dict(
            kernel=(3, 2),
            stride=(2, 3),
            pad=(1, 1),
            pool_type="avg",
            count_include_pad=False,
            pooling_convention="full",
        ),
    ),
    ((1, 2, 5, 5), dict(kernel=(2, 2), stride=(2, 2), pad=(1, 0), pool_type="avg")),
    ((2, 2, 6, 7), dict(kernel=(2, 3), stride=(2, 2), pad=(1, 0), pool_type="sum")),
    ((2, 3, 4, 5), dict(global_pool=True, pool_type="avg")),
    ((2, 3, 4, 5), dict(kernel=(9, 9), global_pool=True, pool_type="max")),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(1, 1), pool_type="lp", p_value=3)),
    (
        (1, 2, 4, 5, 4),
        dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(0, 1, 1), pool_type="max", pooling_convention="full"),
    ),
    ((1, 2, 4, 5, 4), dict(kernel=(2, 2, 3), stride=(1, 2, 2), pad=(1, 0, 1), pool_type="avg")),
]
IDS = [f"{len(s) - 2}d-{p['pool_type']}-{p.get('pooling_convention', 'valid')}-{i}" for i, (s, p) in enumerate(CASES)]


def pool_reference(
    x,
    kernel=None,
    pool_type="max",
    global_pool=False,
    pooling_convention="valid",
    stride=None,
    pad=None,
    p_value=2,
    count_include_pad=None,
):
    nsp = x.ndim - 2
    if global_pool:
        kernel, stride, pad = x.shape[2:], (1,) * nsp, (0,) * nsp
    stride = stride or (1,) * nsp
    pad = pad or (0,) * nsp
    rnd = math.ceil if pooling_convention == "full" else math.floor
    osp = [1 + rnd((s + 2 * p - k) / st) for s, k, st, p in zip(x.shape[2:], kernel, stride, pad, strict=True)]
    out = np.zeros(x.shape[:2] + tuple(osp))
    for pos in itertools.product(*(range(o) for o in osp)):
        start = [o * st - p for o, st, p in zip(pos, stride, pad, strict=True)]
        lo = [max(s, 0) for s in start]
        hi = [min(s + k, n) for s, k, n in zip(start, kernel, x.shape[2:], strict=True)]
        win = x[(Ellipsis,) + tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))].reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            val = win.max(-1)
        elif pool_type == "lp":
            val = (win**p_value).sum(-1) ** (1.0 / p_value)
        else:
            val = win.sum(-1)
            if pool_type == "avg":
                if count_include_pad is False:
                    count = np.prod([b - a for a, b in zip(lo, hi, strict=True)])
                else:  # the window clipped to the padded input (x + pad), as MXNet counts
                    count = np.prod(
                        [min(s + k, n + p) - s for s, k, n, p in zip(start, kernel, x.shape[2:], pad, strict=True)]
                    )
                val = val / count
        out[(Ellipsis,) + pos] = val
    return out


def _data(rng, shape, params, dtype):
    x = rng.standard_normal(shape)
    if params["pool_type"] == "lp":
        x = np.abs(x) + 0.5  # positive sums keep the p-th root smooth
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,params", CASES, ids=IDS)
def test_forward_matches_loops(shape, params, dtype, rng, check):
    x = _data(rng, shape, params, dtype)
    out = pooling(np, x, **params)
    assert out.dtype == dtype
    check.close(out, pool_reference(x.astype(np.float64), **params), dtype)


@pytest.mark.parametrize("shape,params", CASES, ids=IDS)
def test_backward_matches_numerical(shape, params, rng, check):
    x = _data(rng, shape, params, np.float64)  # random data: no ties, so max is differentiable
    head = rng.standard_normal(pooling(np, x, **params).shape)
    grad = pooling_backward(np, head, x, **params)
    assert grad.shape == x.shape
    check.grad(lambda v: pooling(np, v, **params), x, head, grad)


@pytest.mark.parametrize("shape,params", CASES, ids=IDS)
def test_backward_float32(shape, params, rng, check):
    x = _data(rng, shape, params, np.float64)
    head = rng.standard_normal(pooling(np, x, **params).shape)
    got = pooling_backward(np, head.astype(np.float32), x.astype(np.float32), **params)
    assert got.dtype == np.float32
    check.close(got, pooling_backward(np, head, x, **params), np.float32)


def test_max_gradient_goes_to_first_maximum(check):
    x = np.array([[[[1.0, 3.0, 3.0], [3.0, 0.0, 3.0], [2.0, 3.0, 1.0]]]])
    params = dict(kernel=(2, 2), stride=(1, 1), pool_type="max")
    for out in (None, pooling(np, x, **params)):  # the forward output may be handed in
        grad = pooling_backward(np, np.ones((1, 1, 2, 2)), x, out=out, **params)
        # windows (row-major first max): (0,1), (0,1), (1,0), (1,2)
        check.close(grad[0, 0], [[0, 2, 0], [1, 0, 1], [0, 0, 0]])


def test_lp_backward_uses_given_output(rng, check):
    x = _data(rng, (1, 2, 4, 4), dict(pool_type="lp"), np.float64)
    params = dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)
    out = pooling(np, x, **params)
    head = np.ones_like(out)
    check.close(pooling_backward(np, head, x, out=out, **params), pooling_backward(np, head, x, **params))


@pytest.mark.parametrize(
    "size,kernel,stride,pad,convention,expected",
    [
        (28, 2, 2, 0, "valid", 14),
        (7, 3, 2, 0, "valid", 3),
        (6, 3, 2, 0, "full", 3),
        (6, 3, 2, 0, "valid", 2),
        (56, 3, 2, 1, "valid", 28),
        (10, 3, 3, 1, "full", 4),
        (5, 2, 2, 1, "full", 4),
        (10, 3, 3, 0, "same", 4),
    ],
)
def test_output_size_formulas(size, kernel, stride, pad, convention, expected):
    assert pool_out_size(size, kernel, stride, pad, convention) == expected


def test_bad_pool_type():
    with pytest.raises(ValueError, match="pool_type"):
        pooling(np, np.zeros((1, 1, 2, 2)), (2, 2), pool_type="median")


@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
                                dict(kernel=(3, 3), stride=(1, 1), pool_type="avg")])
def test_forward_and_backward_write_into_given_arrays(kw, rng):
    """The executor's planned arrays are written directly; every element of the gradient is written."""
    x = rng.standard_normal((2, 3, 9, 8))
    expected = pooling(np, x, **kw)
    out = np.full(expected.shape, np.nan)
    assert pooling(np, x, into=out, **kw) is out
    np.testing.assert_array_equal(out, expected)
    og = rng.standard_normal(expected.shape)
    grad = pooling_backward(np, og, x, out=expected, **kw)
    into = np.full(x.shape, np.nan)  # garbage where a write is missed
    assert pooling_backward(np, og, x, out=expected, into=into, **kw) is into
    np.testing.assert_array_equal(into, grad)
    wrong = np.zeros(x.shape, np.float32)  # another dtype: not written into
    assert pooling_backward(np, og, x, out=expected, into=wrong, **kw) is not wrong
