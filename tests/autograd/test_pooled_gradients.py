"""Backward with pooled (large) arrays while the gradients it reads are still being computed."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync.runtime.engine import Engine


@pytest.mark.skipif(mx.engine.get().type == "NaiveEngine", reason="needs ops still pending (threaded engine)")
def test_a_summed_output_gradient_outlives_the_backward_push_that_reads_it():
    # RNN's backward reads the gradient of each output; `out` gets two terms, summed into an array
    # made inside the backward step. That array was dropped before the push (the loop went on to
    # `hn`), and with its add still pending its pooled block was parked; the input gradient
    # allocated next took the block over and deleted the var: "push(RNN_backward): var was deleted"
    # (d2l's Bahdanau decoder and Transformer, batch 128 x 256 hidden, about half the runs)
    B, H = 256, 128  # (1, B, H) float32 = 128 KiB: pooled storage
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (1, B, H)).astype(np.float32)
    w = rng.uniform(-0.1, 0.1, (2 * H * H + 2 * H,)).astype(np.float32)
    data, params, state = mx.nd.array(x), mx.nd.array(w), mx.nd.zeros((1, B, H))
    for a in (data, params, state):
        a.attach_grad()
    with autograd.record():
        out, hn = mx.nd.RNN(data, params, state, state_size=H, num_layers=1, mode="rnn_tanh", state_outputs=True)
        heads = [out * 1, out * 2, hn * 3]
    gate = threading.Event()
    head_grads = [mx.nd.ones(h.shape) for h in heads]
    for g in head_grads:  # every gradient term waits until backward() has pushed all its work
        Engine.get().push_sync(lambda rctx: gate.wait(30), g.context, [], [g._chunk.var], name="gate")
    try:
        autograd.backward(heads, head_grads)
    finally:
        gate.set()
    wx, bx, bh = w[:H * H].reshape(H, H), w[2 * H * H:2 * H * H + H], w[2 * H * H + H:]
    y = np.tanh(x[0] @ wx.T + bx + bh)  # T = 1 from a zero state: hn is out
    dpre = 6.0 * (1 - y ** 2)  # 1 + 2 from out, 3 from hn
    np.testing.assert_allclose(data.grad.asnumpy()[0], dpre @ wx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(params.grad.asnumpy()[:H * H].reshape(H, H), dpre.T @ x[0], rtol=1e-4, atol=1e-3)
