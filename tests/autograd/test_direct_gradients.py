"""backward() writes a variable's gradient straight into its ``.grad`` when one op makes it (grad_req='write'),
as MXNet's backward writes the gradient buffers themselves: no copy from a temporary afterwards. Where that
cannot hold (several terms, 'add', the buffer read by the op itself, autograd.grad) the values stay right."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.autograd import backprop


@pytest.fixture
def stores(monkeypatch):
    """The names of the gradient sums and stores backward pushed."""
    names = []
    real = backprop.accumulate

    def counting(out, terms, req, ctx, name, inline):
        names.append(name)
        return real(out, terms, req, ctx, name, inline)

    monkeypatch.setattr(backprop, "accumulate", counting)
    return names


def test_one_term_is_written_into_the_grad_buffer(stores):
    x = mx.nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    buf = x.grad
    with mx.autograd.record():
        y = mx.nd.relu(x * 2)
    y.backward()
    assert x.grad is buf
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 0.0, 2.0])
    assert "_grad_store" not in stores


def test_several_terms_are_summed_into_the_buffer(stores):
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x + x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 5.0])
    assert "_grad_store" in stores


def test_add_accumulates_over_two_backwards():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with mx.autograd.record():
            y = x * 3
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 6.0])


def test_a_buffer_the_op_reads_is_not_written_by_it():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    x.grad[:] = 10.0
    with mx.autograd.record():
        y = x * x.grad  # the backward reads x.grad (the other operand) while making x's gradient
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [10.0, 10.0])


def test_autograd_grad_leaves_the_buffer_alone():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    x.grad[:] = 7.0
    with mx.autograd.record():
        y = x * 4
    (g,) = mx.autograd.grad(y, [x])
    np.testing.assert_allclose(g.asnumpy(), [4.0, 4.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [7.0, 7.0])
