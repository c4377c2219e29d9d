"""``mx.nd.CachedOp``: a Symbol called with NDArrays, recorded for autograd, against numpy."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd as ag

RNG = np.random.default_rng(5)


def _fc_graph():
    x, w, b = mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("b")
    return mx.sym.tanh(mx.sym.FullyConnected(x, w, b, num_hidden=3)), x, w, b


def test_call_matches_numpy_and_sees_writes_between_calls():
    sym, *_ = _fc_graph()
    op = mx.nd.CachedOp(sym)
    xs, ws, bs = RNG.normal(size=(2, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3,))
    x, w, b = mx.nd.array(xs), mx.nd.array(ws), mx.nd.array(bs)
    np.testing.assert_allclose(op(x, w, b).asnumpy(), np.tanh(xs @ ws.T + bs), rtol=1e-5)
    b[:] = 0  # written after the first call: the next call sees it
    np.testing.assert_allclose(op(x, w, b).asnumpy(), np.tanh(xs @ ws.T), rtol=1e-5)


def test_out_writes_into_given_arrays_and_returns_them():
    a = mx.sym.var("a")
    op = mx.nd.CachedOp(mx.sym.Group([a * 2, a + 1]), flags=[("static_alloc", True)])
    x = mx.nd.array([1.0, 2.0])
    o1, o2 = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    res = op(x, out=[o1, o2])
    assert res[0] is o1 and res[1] is o2
    assert o1.asnumpy().tolist() == [2.0, 4.0] and o2.asnumpy().tolist() == [2.0, 3.0]
    outs = op(x)
    assert isinstance(outs, list) and len(outs) == 2
    with pytest.raises(mx.MXNetError, match="2 outputs"):
        op(x, out=o1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        op(x, foo=1)


def test_recorded_call_gives_gradients():
    sym, *_ = _fc_graph()
    op = mx.nd.CachedOp(sym)
    xs, ws, bs = RNG.normal(size=(2, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3,))
    x, w, b = (mx.nd.array(v, dtype=np.float64) for v in (xs, ws, bs))
    for v in (x, w, b):
        v.attach_grad()
    head = RNG.normal(size=(2, 3))
    with ag.record():
        y = op(x, w, b * 2) * 3
    y.backward(mx.nd.array(head, dtype=np.float64))
    dz = 3 * head * (1 - np.tanh(xs @ ws.T + 2 * bs) ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), dz @ ws, rtol=1e-10)
    np.testing.assert_allclose(w.grad.asnumpy(), dz.T @ xs, rtol=1e-10)
    np.testing.assert_allclose(b.grad.asnumpy(), 2 * dz.sum(axis=0), rtol=1e-10)


def test_inputs_from_a_freed_graph_are_constants():
    a = mx.sym.var("a")
    op = mx.nd.CachedOp(a * a)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x + 1
        z = op(y)
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 6.0])
    with ag.record():
        w = op(y + 1) + x  # y's graph was freed by the backward above: y is a constant now
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1.0, 1.0])


def test_new_shapes_bind_again_and_aux_states_are_updated_in_place():
    data = mx.sym.var("data")
    sym = mx.sym.BatchNorm(data, name="bn", momentum=0.5)
    op = mx.nd.CachedOp(sym)
    names = sym.list_inputs()
    assert names == ["data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    xs = RNG.normal(size=(4, 2)) + 3
    x = mx.nd.array(xs)
    gamma, beta = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mean, var = mx.nd.zeros((2,)), mx.nd.ones((2,))
    x.attach_grad()
    with ag.record():
        y = op(x, gamma, beta, mean, var)
    np.testing.assert_allclose(y.asnumpy(), (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(mean.asnumpy(), 0.5 * xs.mean(0), rtol=1e-5)  # the caller's aux array
    y2 = op(mx.nd.array(np.ones((3, 2))), gamma, beta, mean, var)  # inference, another shape
    want = (1 - mean.asnumpy()) / np.sqrt(var.asnumpy() + 1e-3)
    np.testing.assert_allclose(y2.asnumpy(), np.tile(want, (3, 1)), rtol=1e-4)


def test_errors_name_the_problem():
    with pytest.raises(mx.MXNetError, match="Symbol"):
        mx.nd.CachedOp("not a symbol")
    op = mx.nd.CachedOp(mx.sym.var("a") + mx.sym.var("b"))
    with pytest.raises(mx.MXNetError, match="1 inputs for a graph of 2"):
        op(mx.nd.ones((2,)))


def test_ndarray_package_does_not_load_the_symbol_layer():
    code = ("import sys, mxasync as mx; mx.nd.ones((1,)); "
            "assert 'mxasync.symbol' not in sys.modules and 'mxasync.executor' not in sys.modules; "
            "assert mx.nd.CachedOp.__module__ == 'mxasync.executor.cached_op'")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, MXASYNC_PRELOAD="0"))


def test_value_dependent_shape_runs_op_by_op():
    """A graph with contrib.boolean_mask (output length from the mask's values) runs op by op, as MXNet's
    CachedOp does for dynamic shapes: each call sizes its output from its own mask, and gradients flow."""

    class Masked(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, i):
            return F.contrib.boolean_mask(x, i) * 2

    block = Masked()
    block.hybridize()
    x = mx.nd.array(np.arange(6).reshape(3, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = block(x, mx.nd.array([1, 0, 1]))
    y.backward(mx.nd.array([[1, 2], [3, 4]]))
    assert y.asnumpy().tolist() == [[0.0, 2.0], [8.0, 10.0]]
    assert x.grad.asnumpy().tolist() == [[2.0, 4.0], [0.0, 0.0], [6.0, 8.0]]
    assert block(x, mx.nd.array([0, 0, 1])).shape == (1, 2)
