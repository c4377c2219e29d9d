"""A NaN or infinite learning rate (or wd, rescale_grad) is refused, not trained to NaN weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mxasync as mx


@pytest.mark.parametrize("name", ["sgd", "adam", "nag", "rmsprop", "adagrad"])
@pytest.mark.parametrize("kwargs, field", [
    ({"learning_rate": math.nan}, "learning_rate"),
    ({"learning_rate": math.inf}, "learning_rate"),
    ({"wd": math.nan}, "wd"),
    ({"rescale_grad": -math.inf}, "rescale_grad"),
    ({"learning_rate": "fast"}, "learning_rate"),
])
def test_create_refuses(name, kwargs, field):
    with pytest.raises(mx.MXNetError, match=f"{field} must be a finite number") as info:
        mx.optimizer.create(name, **kwargs)
    assert isinstance(info.value, ValueError)


def test_scheduler_base_lr_and_set_learning_rate():
    with pytest.raises(ValueError, match="lr_scheduler.base_lr must be a finite number, got nan"):
        mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(2, base_lr=math.nan))
    opt = mx.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(mx.MXNetError, match="SGD: learning_rate must be a finite number, got nan"):
        opt.set_learning_rate(float("nan"))
    assert opt.learning_rate == 0.1


def test_fit_with_nan_rate_refused_before_any_update():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"),
                               name="softmax")
    it = mx.io.NDArrayIter(np.ones((4, 3), np.float32), np.zeros(4, np.float32), batch_size=2)
    mod = mx.mod.Module(net)
    with pytest.raises(mx.MXNetError, match="learning_rate must be a finite number"):
        mod.fit(it, num_epoch=1, optimizer="sgd", optimizer_params={"learning_rate": float("nan")})
