"""Issue 25, item 8: a NaN or infinite learning rate from an lr_scheduler is refused at the step
that would use it (MXNet's update ops reject it), instead of training silently to NaN weights."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon

pytestmark = pytest.mark.fault


class _Inf(mx.lr_scheduler.LRScheduler):
    def __call__(self, num_update):
        return float("inf")


def _step(net, trainer) -> None:
    with autograd.record():
        loss = net(mx.nd.ones((1, 2))).sum()
    loss.backward()
    trainer.step(1)
    net.weight.data().wait_to_read()


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_nan_rate_from_factor_scheduler_is_refused_at_its_first_step(optimizer):
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize()
    scheduler = mx.lr_scheduler.FactorScheduler(step=1, factor=float("nan"))
    trainer = gluon.Trainer(net.collect_params(), optimizer, {"learning_rate": 0.1, "lr_scheduler": scheduler})
    _step(net, trainer)  # update 1: the base rate (the factor applies from update 2, as in MXNet)
    before = net.weight.data().asnumpy()
    with pytest.raises(mx.MXNetError, match=r"learning rate from FactorScheduler at update 2 is nan"):
        _step(net, trainer)
    after = net.weight.data().asnumpy()
    assert np.isfinite(after).all()
    np.testing.assert_array_equal(after, before)


def test_an_infinite_rate_is_refused_at_the_first_step():
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"lr_scheduler": _Inf()})
    with pytest.raises(mx.MXNetError, match="learning rate from _Inf at update 1 is inf"):
        _step(net, trainer)
    assert np.isfinite(net.weight.data().asnumpy()).all()
