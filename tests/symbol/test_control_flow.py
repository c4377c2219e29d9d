"""mx.nd/sym.contrib.foreach, while_loop and cond: imperative and graph forms agree, with gradients."""

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon


class _Loop(gluon.HybridBlock):
    """foreach over x with a closure on a parameter-like input w, then while_loop and cond on the result."""

    def hybrid_forward(self, F, x, h, w):
        def step(xt, states):
            new = F.tanh(xt * w + states[0])
            return new * 2, [new]

        outs, (last,) = F.contrib.foreach(step, x, [h])
        _, (i, acc) = F.contrib.while_loop(lambda i, acc: i < 3, lambda i, acc: (None, (i + 1, acc * 0.5 + last)),
                                           [F.zeros_like(h.slice_axis(axis=0, begin=0, end=1)), last],
                                           max_iterations=5)
        picked = F.contrib.cond(acc.sum() > 0, lambda: acc * 2, lambda: acc - 1)
        return outs.sum(axis=0) + picked


@pytest.mark.parametrize("seed", [0, 1])
def test_hybridized_control_flow_matches_imperative(seed):
    rng = np.random.default_rng(seed)
    x, h, w = (mx.nd.array(rng.normal(size=s)) for s in ((4, 3), (3,), (3,)))
    results = []
    for hybrid in (False, True):
        net = _Loop()
        if hybrid:
            net.hybridize()
        for a in (x, h, w):
            a.attach_grad()
        with mx.autograd.record():
            y = net(x, h, w)
        y.backward(mx.nd.ones_like(y))
        results.append([y.asnumpy()] + [a.grad.asnumpy().copy() for a in (x, h, w)])
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_while_loop_pads_step_outputs_with_zeros_in_both_forms():
    def cond(i, s):
        return i < 3

    def func(i, s):
        return s * 10, (i + 1, s + i)

    outs_nd, (_, s_nd) = mx.nd.contrib.while_loop(cond, func, [mx.nd.array([0]), mx.nd.array([1])], max_iterations=5)
    outs, (_, s) = mx.sym.contrib.while_loop(cond, func, [mx.sym.var("i"), mx.sym.var("s")], max_iterations=5)
    ex = mx.sym.Group([outs, s]).bind(mx.cpu(), {"i": mx.nd.array([0]), "s": mx.nd.array([1])})
    got = ex.forward()
    np.testing.assert_array_equal(outs_nd.asnumpy().ravel(), [10, 10, 20, 0, 0])
    np.testing.assert_array_equal(got[0].asnumpy(), outs_nd.asnumpy())
    np.testing.assert_array_equal(got[1].asnumpy(), s_nd.asnumpy())


def test_foreach_infers_partial_shapes_and_nests():
    data = mx.sym.var("data", shape=(0, 3, 4))
    outs, _ = mx.sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), data, [mx.sym.var("s")])
    assert outs.infer_shape_partial()[1][0] == (0, 3, 4)

    def outer(row, states):
        inner, (acc,) = mx.sym.contrib.foreach(lambda v, s: (v * 2, [s[0] + v]), row, states)
        return inner, [acc]

    outs, (acc,) = mx.sym.contrib.foreach(outer, mx.sym.var("m"), [mx.sym.var("a")])
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    ex = mx.sym.Group([outs, acc]).bind(mx.cpu(), {"m": mx.nd.array(m), "a": mx.nd.zeros((1,))})
    got = ex.forward()
    np.testing.assert_array_equal(got[0].asnumpy(), (m * 2)[:, :, None])  # a 1-D slice keeps shape (1,)
    np.testing.assert_array_equal(got[1].asnumpy(), [m.sum()])


def test_cond_any_nonzero_predicate_is_true():
    assert mx.nd.contrib.cond(mx.nd.array([-0.5]), lambda: 1, lambda: 2) == 1
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: 1, lambda: 2) == 2


def test_bind_ignores_names_the_symbol_lacks_and_extra_head_gradients():
    x = mx.sym.var("x")
    grads = {"x": mx.nd.zeros((2,)), "unused": mx.nd.zeros((3,))}
    ex = (x * 2).bind(mx.cpu(), {"x": mx.nd.ones((2,)), "unused": mx.nd.ones((3,))}, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((2,)), mx.nd.ones((5,))])
    np.testing.assert_array_equal(grads["x"].asnumpy(), [2, 2])
