"""Kernels that write into the planned arrays and skip gradients no one asked for.

FullyConnected, Convolution and Activation take ``out=`` / ``into=``: their
results must equal the plain path's for every ``grad_req`` (write, add, null on
the data input), and a gradient with req ``null`` must not be computed at all.
"""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.kernels import fully_connected as fck
from mxasync.operator.kernels.conv import convolution as convk


def _net(kind):
    x = mx.sym.Variable("data")
    if kind == "fc":
        h = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=5, name="fc1"), act_type="relu")
        return mx.sym.FullyConnected(h, num_hidden=3, name="fc2"), (4, 6)
    if kind == "conv":
        h = mx.sym.Activation(mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c1"), act_type="tanh")
        h = mx.sym.Convolution(h, kernel=(2, 2), num_filter=3, name="c2")
        return mx.sym.Activation(h, act_type="sigmoid"), (2, 2, 6, 6)
    raise AssertionError(kind)


def _run(sym, shape, reqs, repeat=1):
    rng = np.random.default_rng(3)
    exe = sym.simple_bind(mx.cpu(), grad_req=reqs, data=shape)
    for arr in exe.arg_arrays:
        arr[:] = rng.standard_normal(arr.shape).astype(np.float32)
    for g in exe.grad_arrays:
        if g is not None:
            g[:] = 1.0  # 'add' must keep what is there
    head = rng.standard_normal(exe.outputs[0].shape).astype(np.float32)
    for _ in range(repeat):
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(head))
    return exe.outputs[0].asnumpy(), {k: v.asnumpy() for k, v in exe.grad_dict.items()}


@pytest.mark.parametrize("kind", ["fc", "conv"])
def test_grad_reqs_agree(kind):
    sym, shape = _net(kind)
    names = sym.list_arguments()
    out_w, g_w = _run(sym, shape, "write")
    out_n, g_n = _run(sym, shape, {n: ("null" if n == "data" else "write") for n in names})
    np.testing.assert_allclose(out_n, out_w, rtol=1e-6)
    assert "data" not in g_n
    for n in g_n:
        np.testing.assert_allclose(g_n[n], g_w[n], rtol=1e-5, atol=1e-6)
    _, g_a = _run(sym, shape, "add", repeat=2)
    for n in names:
        np.testing.assert_allclose(g_a[n], 1.0 + 2 * g_w[n], rtol=1e-5, atol=1e-5)


def test_fc_backward_skips_and_writes_into():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal((5, 6))
    dy = rng.standard_normal((4, 5))
    into = (np.empty((4, 6)), np.empty((5, 6)), np.empty(5))
    dx, dw, db = fck.fully_connected_backward(np, dy, x, w, need_data_grad=False, into=into)
    assert dx is None
    assert dw is into[1] and db is into[2]
    np.testing.assert_allclose(dw, dy.T @ x)
    np.testing.assert_allclose(db, dy.sum(0))
    out = np.empty((4, 5))
    assert fck.fully_connected(np, x, w, np.ones(5), out=out) is out
    np.testing.assert_allclose(out, x @ w.T + 1)
    # a target that does not fit (wrong dtype) is ignored, not written wrongly
    odd = np.empty((4, 5), np.float32)
    res = fck.fully_connected(np, x, w, None, no_bias=True, out=odd)
    assert res is not odd
    np.testing.assert_allclose(res, x @ w.T)


def test_conv_backward_skips_data_grad_and_writes_into():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    dy = rng.standard_normal((2, 4, 5, 5))
    ref = convk.convolution_backward(np, dy, x, w, (3, 3))
    into = (None, np.empty_like(w), np.empty(4))
    dx, dw, db = convk.convolution_backward(np, dy, x, w, (3, 3), need_data_grad=False, into=into)
    assert dx is None and dw is into[1] and db is into[2]
    np.testing.assert_allclose(dw, ref[1])
    np.testing.assert_allclose(db, ref[2])
    full = np.empty_like(x)
    assert convk.convolution_backward(np, dy, x, w, (3, 3), into=(full, None, None))[0] is full
    np.testing.assert_allclose(full, ref[0])
    out = np.empty((2, 4, 5, 5))
    assert convk.convolution(np, x, w, np.arange(4.0), (3, 3), out=out) is out
    np.testing.assert_allclose(out, convk.convolution(np, x, w, np.arange(4.0), (3, 3)))


@pytest.mark.parametrize("kernel,stride", [((2, 2), (2, 2)), ((2, 2), (3, 3)), ((3, 3), (2, 2))])
def test_max_pool_backward_first_max_takes_the_gradient(kernel, stride):
    from mxasync.operator.kernels import pooling as poolk
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (2, 3, 7, 7)).astype(np.float32)  # many ties
    out = poolk.pooling(np, x, kernel, stride=stride)
    og = rng.standard_normal(out.shape).astype(np.float32)
    got = poolk.pooling_backward(np, og, x, kernel, stride=stride, out=out)
    want = np.zeros_like(x)
    for n, c, i, j in np.ndindex(*out.shape):
        win = x[n, c, i * stride[0]:i * stride[0] + kernel[0], j * stride[1]:j * stride[1] + kernel[1]]
        a, b = np.unravel_index(np.argmax(win), win.shape)  # the first maximum, row-major
        want[n, c, i * stride[0] + a, j * stride[1] + b] += og[n, c, i, j]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_im2col_window_view_matches_one_copy_per_offset(nsp):
    """The numpy backend's columns (one strided copy of a window view) and its col2im equal the generic
    kernels' (one copy, one sum per kernel offset)."""
    from mxasync.backends.numpy.kernels.conv import _columns
    from mxasync.operator.kernels import _util as util
    from mxasync.operator.kernels.conv import im2col
    rng = np.random.default_rng(nsp)
    for _ in range(6):
        kernel = tuple(int(k) for k in rng.integers(1, 4, nsp))
        stride = tuple(int(s) for s in rng.integers(1, 3, nsp))
        dilate = tuple(int(d) for d in rng.integers(1, 3, nsp))
        pad = tuple(int(p) for p in rng.integers(0, 2, nsp))
        x = rng.standard_normal((2, 3) + tuple(int(s) for s in rng.integers(7, 10, nsp)))
        want = im2col.im2col_nd(np, x, kernel, stride, dilate, pad)
        padded = _columns.pad_spatial(x, pad, pad)
        np.testing.assert_array_equal(padded, util.pad_spatial(np, x, pad, pad))
        got = _columns.im2col_into(padded, kernel, stride, dilate, np.empty_like(want))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(_columns.col2im(got, x.shape[2:], kernel, stride, dilate, pad),
                                      im2col.col2im_nd(np, got, x.shape[2:], kernel, stride, dilate, pad))
