"""The dynamic loss scaler in a Gluon loop (``init_trainer`` / ``scale_loss`` / ``Trainer.step``) against
MXNet 1.9.1's trace of the same loop (tests/fixtures/amp/make_fixtures.py): steps with an inf input
are skipped and halve the scale; three clean steps in a row double it (window shortened from 2000)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync.contrib import amp
from mxasync.contrib.amp import LossScaler

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "amp"
OVERFLOW_STEPS = (2, 3, 7)  # as in make_fixtures.py


def _trace(target: str) -> list[dict]:
    amp.init(target)
    net = mx.gluon.nn.Dense(4, in_units=3)
    net.initialize(mx.init.Constant(0.1))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._scale_seq_len = 3
    trace = []
    for step in range(10):
        x = mx.nd.full((1, 3), float("inf") if step in OVERFLOW_STEPS else 0.5)
        before = net.weight.data().asnumpy().copy()
        with autograd.record():
            # small enough that the scaled gradients (up to 2**16 * 0.25) stay finite in float16 too
            loss = net(x).astype("float32").sum() * 0.25
            with amp.scale_loss(loss, trainer) as scaled:
                autograd.backward(scaled)
        trainer.step(1)
        moved = bool((net.weight.data().asnumpy() != before).any())
        trace.append({"step": step, "loss_scale": trainer._amp_loss_scaler.loss_scale, "updated": moved})
    return trace


@pytest.mark.parametrize("target", ["bfloat16", "float16"])
def test_skips_and_halves_as_mxnet(target: str) -> None:
    # MXNet's CPU has no float16 FullyConnected, so its bfloat16 trace stands for both (the scaler is dtype-blind)
    assert _trace(target) == json.loads((FIX / "loss-scaler-bfloat16.json").read_text())


def _scaled_backward():
    """A 2 -> 1 Dense net of ones under bfloat16 AMP after one scaled backward on [[1, 2]]: (net, trainer)."""
    amp.init("bfloat16")
    net = mx.gluon.nn.Dense(1, in_units=2, use_bias=False)
    net.initialize(mx.init.Constant(1.0))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(trainer)
    with autograd.record():
        loss = net(mx.nd.array([[1.0, 2.0]])).astype("float32").sum()
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    return net, trainer


def test_update_uses_unscaled_gradients() -> None:
    net, trainer = _scaled_backward()
    assert net.weight.grad().asnumpy().astype(np.float32).tolist() == [[2.0 ** 16, 2.0 ** 17]]
    trainer.step(1)
    assert net.weight.data().asnumpy().tolist() == [[0.5, 0.0]]  # 1 - 0.5 * [1, 2]


def test_unscale_divides_gradients_now() -> None:
    net, trainer = _scaled_backward()
    amp.unscale(trainer)
    assert net.weight.grad().asnumpy().astype(np.float32).tolist() == [[1.0, 2.0]] and trainer._scale == 1.0


def test_scaler_grows_to_the_cap() -> None:
    scaler = LossScaler()
    scaler._scale_seq_len = 1

    class _P:
        _grad = None

    for _ in range(20):
        scaler.has_overflow([_P()])
    assert scaler.loss_scale == 2.0 ** 24


def test_init_trainer_needs_init_and_a_trainer() -> None:
    net = mx.gluon.nn.Dense(1, in_units=1)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd")
    with pytest.raises(AssertionError, match="amp.init"):
        amp.init_trainer(trainer)
    amp.init("float16")
    with pytest.raises(TypeError, match="only compatible with Gluon Trainer"):
        amp.init_trainer(mx.optimizer.SGD())
