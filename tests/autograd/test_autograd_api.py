"""mx.autograd's scopes, grad_req, head gradients, errors, detach and a training loop."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd as ag


def _var(values, req="write"):
    x = mx.nd.array(values)
    x.attach_grad(req)
    return x


def test_scopes_and_flags():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
        with ag.predict_mode():
            assert ag.is_recording() and not ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
        with ag.train_mode():
            assert ag.is_training()
    assert not ag.is_recording() and not ag.is_training()
    assert ag.set_recording(True) is False
    assert ag.set_training(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(False) is True
    assert ag.state.active == 0


def test_flags_are_per_thread():
    seen = []
    with ag.record():
        t = threading.Thread(target=lambda: seen.append((ag.is_recording(), ag.is_training())))
        t.start()
        t.join()
    assert seen == [(False, False)]


def test_grad_req_write_add_null():
    x, y, z = _var([1.0, 2.0]), _var([1.0, 2.0], "add"), _var([1.0, 2.0], "null")
    for _ in range(2):
        with ag.record():
            out = x * 3 + y * 3 + z * 3
        out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 3])
    np.testing.assert_allclose(y.grad.asnumpy(), [6, 6])
    np.testing.assert_allclose(z.grad.asnumpy(), [0, 0])
    assert mx.nd.array([1.0]).grad is None


def test_head_grads_and_autograd_backward():
    x = _var([1.0, 2.0, 3.0])
    with ag.record():
        a = x * 2
        b = x * x
    ag.backward([a, b], [mx.nd.array([1.0, 0.0, 1.0]), mx.nd.array([1.0, 1.0, 0.0])])
    np.testing.assert_allclose(x.grad.asnumpy(), [2 + 2, 0 + 4, 2 + 0])
    with ag.record():
        c = x * 5
    c.backward(mx.nd.array([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [2.5, 5.0, 10.0])


def test_grad_leaves_dot_grad_untouched():
    x, w = _var([1.0, 2.0]), _var([3.0, 4.0])
    with ag.record():
        y = (x * w).sum()
    gx, gw = ag.grad(y, [x, w])
    np.testing.assert_allclose(gx.asnumpy(), [3, 4])
    np.testing.assert_allclose(gw.asnumpy(), [1, 2])
    np.testing.assert_allclose(x.grad.asnumpy(), [0, 0])
    with ag.record():
        y = (x * w).sum()
    g = ag.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(g.asnumpy(), [3, 4])
    y.backward()  # the graph was retained
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 4])


def test_pause_stops_recording():
    x = _var([1.0, 2.0])
    with ag.record():
        y = x * 2
        with ag.pause():
            z = x * 10
        out = y + z
    assert z._ag is None
    out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 2])
    a = x * 3  # not recording: nothing recorded
    assert a._ag is None


def test_dropout_follows_training_mode():
    x = mx.nd.ones((200,))
    with ag.record():
        dropped = mx.nd.Dropout(x, p=0.5).asnumpy()
        with ag.predict_mode():
            kept = mx.nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()
    np.testing.assert_array_equal(kept, 1.0)
    np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), 1.0)
    with ag.train_mode():
        assert (mx.nd.Dropout(x, p=0.5).asnumpy() == 0).any()


def test_dropout_gradient_uses_the_mask():
    x = _var(np.ones(100))
    with ag.record():
        y = mx.nd.Dropout(x, p=0.5)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), y.asnumpy())  # mask / (1 - p), as y on ones


def test_inplace_write_into_graph_raises():
    x = _var([1.0, 2.0])
    with ag.record():
        y = x * 2
        for write in (lambda: y.__iadd__(1), lambda: y.__setitem__(slice(None), 0),
                      lambda: x.__imul__(2), lambda: mx.nd.ones((2,)).copyto(y),
                      lambda: mx.nd.exp(x, out=y)):
            with pytest.raises(mx.MXNetError, match="computational graph"):
                write()
        fresh = mx.nd.zeros((2,))
        fresh += 1  # not in a graph: fine
    x += 1  # outside record(): fine (optimizer updates)
    np.testing.assert_allclose(x.asnumpy(), [2, 3])


def test_second_backward_without_retain_graph_raises():
    x = _var([1.0, 2.0])
    with ag.record():
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4])
    with pytest.raises(mx.MXNetError, match="retain_graph"):
        y.backward()


def test_backward_of_untracked_array_raises():
    with pytest.raises(mx.MXNetError, match="computational graph"):
        mx.nd.ones((2,)).backward()


def test_detach_cuts_the_graph():
    x = _var([1.0, 2.0])
    with ag.record():
        y = x * x
        z = y.detach() * x + y
    z.backward()
    # d/dx (stop(x^2) * x + x^2) = x^2 + 2x
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 8])
    with ag.record():
        w = mx.nd.BlockGrad(x * 2) * x
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4])


def test_new_record_scope_starts_a_new_tape():
    x = _var([1.0])
    with ag.record():
        x * 2
    assert len(ag.state._tls.tape) == 1
    with ag.record():
        y = x * 3
        with ag.record():  # nested: same tape
            y = y + 1
    assert len(ag.state._tls.tape) == 2
    y.backward()
    assert ag.state._tls.tape == []
    np.testing.assert_allclose(x.grad.asnumpy(), [3])


def test_mark_variables():
    x, g = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
    ag.mark_variables([x], [g], "add")
    for _ in range(2):
        with ag.record():
            y = x * 4
        y.backward()
    np.testing.assert_allclose(g.asnumpy(), [8, 8])
    assert x.grad is g


def test_backward_is_asynchronous_and_ordered():
    x = _var(np.ones((300, 300)))
    with ag.record():
        y = mx.nd.dot(x, x).sum()
    y.backward()  # only pushes
    x += 1  # a later write: runs after backward read x
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((300, 300), 600.0))


def test_linear_regression_converges():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(64, 3))
    true_w, true_b = np.array([[2.0], [-3.4], [1.5]]), 4.2
    Y = X @ true_w + true_b
    x, y = mx.nd.array(X), mx.nd.array(Y)
    w, b = mx.nd.zeros((3, 1)), mx.nd.zeros((1,))
    w.attach_grad()
    b.attach_grad()
    for _ in range(200):
        with ag.record():
            loss = ((mx.nd.dot(x, w) + b - y) ** 2).mean()
        loss.backward()
        mx.nd.sgd_update(w, w.grad, lr=0.1, out=w)
        b[:] = b - 0.1 * b.grad
    np.testing.assert_allclose(w.asnumpy(), true_w, atol=1e-3)
    np.testing.assert_allclose(b.asnumpy(), [true_b], atol=1e-3)
    assert float(loss.asscalar()) < 1e-5
