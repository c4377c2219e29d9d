"""Higher-order gradients: ``autograd.grad(..., create_graph=True)`` then a second backward.

Checked against analytical second derivatives for the ops MXNet 1.9.1 differentiates twice,
and, for every op whose declared gradient kernel is evaluated over NDArrays, against central
differences of the first-order gradient.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd as ag
from mxasync.ndarray._invoke import invoke
from mxasync.operator import get_op, list_ops

RNG = np.random.default_rng(3)

# the ops that declare a recorded gradient: a rule of their own, or a backward kernel run on NDArrays
RECORDED = sorted(n for n in list_ops() if get_op(n).prop_cls.recorded_gradient is not None
                  or get_op(n).prop_cls.xp_gradient)


def _nd(a):
    return mx.nd.array(np.asarray(a, np.float64), dtype=np.float64)


def _second(fn, x0, head=None, vec=None):
    """(first gradient, second-order product) of ``fn`` at ``x0``: ``g = J^T head`` recorded, then
    ``d(vec . g)/dx``."""
    x = _nd(x0)
    x.attach_grad()
    with ag.record():
        y = fn(x)
    hg = _nd(np.ones(y.shape) if head is None else head)
    g = ag.grad(y, [x], head_grads=hg, create_graph=True)[0]
    g.backward(_nd(np.ones(g.shape) if vec is None else vec))
    return g.asnumpy(), x.grad.asnumpy()


# op: (call, first derivative, second derivative, domain)
ANALYTIC = {
    "sin": (mx.nd.sin, np.cos, lambda x: -np.sin(x), (-2, 2)),
    "cos": (mx.nd.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), (-2, 2)),
    "tan": (mx.nd.tan, lambda x: 1 / np.cos(x) ** 2, lambda x: 2 * np.tan(x) / np.cos(x) ** 2, (-1, 1)),
    "exp": (mx.nd.exp, np.exp, np.exp, (-1, 1)),
    "log": (mx.nd.log, lambda x: 1 / x, lambda x: -1 / x ** 2, (0.5, 2)),
    "log2": (mx.nd.log2, lambda x: 1 / (x * math.log(2)), lambda x: -1 / (x ** 2 * math.log(2)), (0.5, 2)),
    "log10": (mx.nd.log10, lambda x: 1 / (x * math.log(10)), lambda x: -1 / (x ** 2 * math.log(10)), (0.5, 2)),
    "log1p": (mx.nd.log1p, lambda x: 1 / (1 + x), lambda x: -1 / (1 + x) ** 2, (0.5, 2)),
    "expm1": (mx.nd.expm1, np.exp, np.exp, (-1, 1)),
    "sqrt": (mx.nd.sqrt, lambda x: 0.5 / np.sqrt(x), lambda x: -0.25 * x ** -1.5, (0.5, 2)),
    "rsqrt": (mx.nd.rsqrt, lambda x: -0.5 * x ** -1.5, lambda x: 0.75 * x ** -2.5, (0.5, 2)),
    "cbrt": (mx.nd.cbrt, lambda x: x ** (-2 / 3) / 3, lambda x: -2 / 9 * x ** (-5 / 3), (0.5, 2)),
    "rcbrt": (mx.nd.rcbrt, lambda x: -x ** (-4 / 3) / 3, lambda x: 4 / 9 * x ** (-7 / 3), (0.5, 2)),
    "square": (mx.nd.square, lambda x: 2 * x, lambda x: 2 + 0 * x, (-2, 2)),
    "reciprocal": (mx.nd.reciprocal, lambda x: -1 / x ** 2, lambda x: 2 / x ** 3, (0.5, 2)),
    "sinh": (mx.nd.sinh, np.cosh, np.sinh, (-2, 2)),
    "cosh": (mx.nd.cosh, np.sinh, np.cosh, (-2, 2)),
    "tanh": (mx.nd.tanh, lambda x: 1 - np.tanh(x) ** 2, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2), (-2, 2)),
    "arcsin": (mx.nd.arcsin, lambda x: (1 - x ** 2) ** -0.5, lambda x: x * (1 - x ** 2) ** -1.5, (-0.8, 0.8)),
    "arccos": (mx.nd.arccos, lambda x: -(1 - x ** 2) ** -0.5, lambda x: -x * (1 - x ** 2) ** -1.5, (-0.8, 0.8)),
    "arctan": (mx.nd.arctan, lambda x: 1 / (1 + x ** 2), lambda x: -2 * x / (1 + x ** 2) ** 2, (-2, 2)),
    "arcsinh": (mx.nd.arcsinh, lambda x: (x ** 2 + 1) ** -0.5, lambda x: -x * (x ** 2 + 1) ** -1.5, (-2, 2)),
    "arccosh": (mx.nd.arccosh, lambda x: (x ** 2 - 1) ** -0.5, lambda x: -x * (x ** 2 - 1) ** -1.5, (1.5, 3)),
    "arctanh": (mx.nd.arctanh, lambda x: 1 / (1 - x ** 2), lambda x: 2 * x / (1 - x ** 2) ** 2, (-0.8, 0.8)),
    "sigmoid": (mx.nd.sigmoid, lambda x: _sig(x) * (1 - _sig(x)),
                lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x)), (-3, 3)),
    "relu": (mx.nd.relu, lambda x: (x > 0) * 1.0, lambda x: 0 * x, (-2, 2)),
    "abs": (mx.nd.abs, np.sign, lambda x: 0 * x, (-2, 2)),
    "x*x*x": (lambda x: x * x * x, lambda x: 3 * x ** 2, lambda x: 6 * x, (-2, 2)),
    "x/(1+x)": (lambda x: x / (x + 1), lambda x: 1 / (1 + x) ** 2, lambda x: -2 / (1 + x) ** 3, (0.5, 2)),
    "x**3 (pow)": (lambda x: x ** 3, lambda x: 3 * x ** 2, lambda x: 6 * x, (0.5, 2)),
    "2**x": (lambda x: 2 ** x, lambda x: 2 ** x * math.log(2), lambda x: 2 ** x * math.log(2) ** 2, (-1, 1)),
    "1/x (rdiv)": (lambda x: 1 / x, lambda x: -1 / x ** 2, lambda x: 2 / x ** 3, (0.5, 2)),
    "sin(x)*exp(x)": (lambda x: mx.nd.sin(x) * mx.nd.exp(x), lambda x: np.exp(x) * (np.sin(x) + np.cos(x)),
                      lambda x: 2 * np.exp(x) * np.cos(x), (-1, 1)),
}


def _sig(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("name", list(ANALYTIC))
def test_second_derivative_matches_analytic(name):
    fn, d1, d2, (lo, hi) = ANALYTIC[name]
    x0 = RNG.uniform(lo, hi, (2, 3))
    if name in ("relu", "abs"):
        x0[np.abs(x0) < 0.1] = 0.5  # away from the kink
    head, vec = RNG.uniform(0.5, 1.5, (2, 3)), RNG.uniform(0.5, 1.5, (2, 3))
    g, gg = _second(fn, x0, head, vec)
    np.testing.assert_allclose(g, head * d1(x0), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(gg, vec * head * d2(x0), rtol=1e-6, atol=1e-10)


def test_mxnet_example_exp_plus_x():
    x = mx.nd.ones((1,))
    x.attach_grad()
    with ag.record():
        z = mx.nd.elemwise_add(mx.nd.exp(x), x)
    dx, = ag.grad(z, [x], create_graph=True)
    assert abs(dx.asscalar() - (math.e + 1)) < 1e-6
    dx.backward()
    assert abs(x.grad.asscalar() - math.e) < 1e-6


def test_mixed_partials_of_a_product():
    # f = sum(x^2 y): df/dx = 2xy, d/dy sum(2xy) = 2x; d/dx sum(2xy) = 2y
    a, b = RNG.uniform(0.5, 1.5, (3,)), RNG.uniform(0.5, 1.5, (3,))
    x, y = _nd(a), _nd(b)
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        f = (x * x * y).sum()
    gx = ag.grad(f, [x], create_graph=True)[0]
    np.testing.assert_allclose(gx.asnumpy(), 2 * a * b)
    gx.backward()
    np.testing.assert_allclose(y.grad.asnumpy(), 2 * a)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * b)


def test_third_derivative():
    a = RNG.uniform(-1, 1, (4,))
    x = _nd(a)
    x.attach_grad()
    with ag.record():
        y = mx.nd.sin(x)
        g1 = ag.grad(y, [x], create_graph=True)[0]
        g2 = ag.grad(g1, [x], create_graph=True)[0]
    np.testing.assert_allclose(g2.asnumpy(), -np.sin(a))
    g2.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), -np.cos(a))


def test_broadcast_and_fully_connected_second_order():
    xs, ws = RNG.uniform(0.5, 1.5, (2, 3)), RNG.uniform(0.5, 1.5, (4, 3))
    x, w = _nd(xs), _nd(ws)
    x.attach_grad()
    w.attach_grad()
    with ag.record():
        h = mx.nd.FullyConnected(x, w, num_hidden=4, no_bias=True)
        y = mx.nd.broadcast_mul(h, mx.nd.sum(h, axis=1, keepdims=True))
    gw = ag.grad(y, [w], create_graph=True)[0]
    gw.backward()
    # y_ij = h_ij S_i with S_i = sum_j h_ij: dL/dh_ij = S_i + sum_k h_ik = 2 S_i; dL/dw = (2 S)^T x
    s = (xs @ ws.T).sum(axis=1)
    np.testing.assert_allclose(gw.asnumpy(), np.outer(np.full(4, 1.0), 2 * s @ xs))
    # sum(gw) = 2 * 4 * sum_i S_i sum_k x_ik; d/dx_ik = 8 * (sum_m x_im * sum_j w_jk + S_i)
    want = 8 * (xs.sum(axis=1, keepdims=True) * ws.sum(axis=0)[None, :] + s[:, None])
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-10)


def test_create_graph_retains_the_graph_and_keeps_first_order_grad_separate():
    x = _nd([0.3, 0.7])
    x.attach_grad()
    with ag.record():
        y = mx.nd.exp(x)
    g = ag.grad(y, [x], create_graph=True)
    second = ag.grad(y, [x], retain_graph=True)[0]  # the graph was retained by create_graph
    np.testing.assert_allclose(second.asnumpy(), np.exp([0.3, 0.7]))
    assert second._ag is None  # without create_graph the result is a plain array
    g[0].backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([0.3, 0.7]))


def test_op_without_recorded_rule_refuses_a_second_derivative():
    x = _nd([[0.1, 0.5, 0.2]])
    x.attach_grad()
    with ag.record():
        y = mx.nd.softmax(x)
    g = ag.grad(y, [x], head_grads=_nd([[1.0, 2.0, 3.0]]), create_graph=True)[0]
    p = np.exp([0.1, 0.5, 0.2]) / np.exp([0.1, 0.5, 0.2]).sum()
    np.testing.assert_allclose(g.asnumpy()[0], p * (np.array([1.0, 2, 3]) - (p * [1, 2, 3]).sum()))
    with pytest.raises(mx.MXNetError, match="_backward_softmax is non-differentiable"):
        g.backward()


def test_constant_gradient_is_not_in_a_graph():
    x = _nd([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 3 + 1
    g = ag.grad(y, [x], create_graph=True)[0]
    np.testing.assert_allclose(g.asnumpy(), [3.0, 3.0])
    with pytest.raises(mx.MXNetError, match="not in a computational graph"):
        g.backward()  # as MXNet: no input of the gradient's graph requires a gradient


# -- every op whose declared gradient kernel runs over NDArrays: against central differences --------
def _op_case(name):
    """(callable on NDArrays, input arrays) for an op name of RECORDED."""
    u = RNG.uniform(0.3, 0.7, (2, 3))
    if name.startswith("broadcast_"):
        return (lambda a, b: invoke(name, [a, b])), [u + 0.6, RNG.uniform(0.3, 0.7, (1, 3)) + 0.6]
    if name.startswith("elemwise_") or name.startswith("_") and not name.endswith("_scalar") and name != "_copy":
        return (lambda a, b: invoke(name, [a, b])), [u + 0.6, RNG.uniform(0.3, 0.7, (2, 3)) + 0.6]
    if name.endswith("_scalar"):
        return (lambda a: invoke(name, [a], scalar=1.7)), [u + 0.6]
    if name == "clip":
        return (lambda a: invoke("clip", [a * a], a_min=0.2, a_max=0.3)), [u]
    if name == "Dropout":
        return (lambda a: mx.nd.Dropout(a * a, p=0.0)), [u]
    if name == "arccosh":
        return (lambda a: invoke(name, [a])), [u + 1.2]
    return (lambda a: invoke(name, [a])), [u]


def _first_grads(fn, arrays, head):
    xs = [_nd(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with ag.record():
        y = fn(*xs)
    y.backward(_nd(head))
    return [x.grad.asnumpy() for x in xs]


# gradients flowing through linear ops (their backward's gradient is the op itself) into nonlinear ones
LINEAR_CASES = {
    "slice+transpose": lambda a: mx.nd.sin(mx.nd.transpose(a[:, 1:]) ** 2),
    "reshape+sum": lambda a: mx.nd.exp(mx.nd.sum(mx.nd.reshape(a * a, (3, 2)), axis=1)),
    "mean+broadcast_to": lambda a: mx.nd.broadcast_to(mx.nd.mean(a ** 3, axis=0, keepdims=True), (2, 3)) * a,
    "take+expand_dims": lambda a: mx.nd.tanh(mx.nd.expand_dims(mx.nd.take(a, mx.nd.array([1, 0, 1])), 0)) * 2,
    "advanced index": lambda a: mx.nd.log(a[1, [2, 0, 2]] + a[0, [1, 1, 0]] * a[0, [2, 0, 1]]),
    "Cast+tile+flip": lambda a: mx.nd.sigmoid(mx.nd.tile(mx.nd.reverse(mx.nd.Cast(a, "float64"), axis=1), (2, 1))) ** 2,
}


@pytest.mark.parametrize("name", list(LINEAR_CASES))
def test_linear_ops_pass_second_derivatives_through(name):
    _check_against_differences(LINEAR_CASES[name], [RNG.uniform(0.3, 0.7, (2, 3))], name)


@pytest.mark.parametrize("name", [n for n in RECORDED if n not in ("dot", "FullyConnected")])
def test_recorded_gradient_rule_against_central_differences(name):
    fn, arrays = _op_case(name)
    _check_against_differences(fn, arrays, name)


def test_dot_and_fully_connected_rules_against_central_differences():
    a, b = RNG.uniform(0.3, 0.7, (2, 3)), RNG.uniform(0.3, 0.7, (4, 3))
    for ta, tb, x, y in [(False, True, a, b), (True, False, a.T.copy(), b.T.copy()), (False, False, a, b.T.copy()),
                         (True, True, a.T.copy(), b)]:
        _check_against_differences(lambda p, q, ta=ta, tb=tb: mx.nd.dot(p * p, q, transpose_a=ta, transpose_b=tb) ** 2,
                                   [x, y], f"dot{ta, tb}")
    bias = RNG.uniform(0.3, 0.7, (4,))
    _check_against_differences(lambda p, q, c: mx.nd.sin(mx.nd.FullyConnected(p, q, c, num_hidden=4)),
                               [a, b, bias], "FullyConnected")
    _check_against_differences(lambda p, q: mx.nd.FullyConnected(p.reshape((1, 2, 3)) ** 2, q, num_hidden=4,
                                                                  no_bias=True, flatten=False) ** 2,
                               [a, b], "FullyConnected flatten=False")


def _check_against_differences(fn, arrays, name):
    xs = [_nd(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with ag.record():
        y = fn(*xs)
    head = RNG.uniform(0.5, 1.5, y.shape)
    grads = ag.grad(y, xs, head_grads=_nd(head), create_graph=True)
    for g, want in zip(grads, _first_grads(fn, arrays, head), strict=True):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-10, atol=1e-12)
    vecs = [RNG.uniform(0.5, 1.5, a.shape) for a in arrays]
    live = [k for k, g in enumerate(grads) if g._ag is not None]
    if not live:
        return  # a constant gradient: nothing to differentiate
    ag.backward([grads[k] for k in live], [_nd(vecs[k]) for k in live])
    eps = 1e-6
    for i, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi, lo = [b.copy() for b in arrays], [b.copy() for b in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            fh, fl = _first_grads(fn, hi, head), _first_grads(fn, lo, head)
            num[idx] = sum(((fh[k] - fl[k]) * vecs[k]).sum() for k in live) / (2 * eps)
        np.testing.assert_allclose(xs[i].grad.asnumpy(), num, rtol=1e-5, atol=1e-6, err_msg=name)
