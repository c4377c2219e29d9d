"""Issue 34, item 5: a ``.states`` file whose optimizer has a NaN or infinite learning rate, weight decay
or momentum is refused at load, naming the file and the value (main trained silently to NaN weights:
unpickling restores the attributes without the constructor's checks)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd, gluon

pytestmark = pytest.mark.fault


def _trainer(**kw):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    return net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9, **kw})


def _step(net, trainer):
    with autograd.record():
        loss = net(mx.nd.ones((4, 3))).sum()
    loss.backward()
    trainer.step(4)


def _tampered(tmp_path, attr, value, scheduler=False):
    net, trainer = _trainer(**({"lr_scheduler": mx.lr_scheduler.FactorScheduler(10)} if scheduler else {}))
    _step(net, trainer)
    path = tmp_path / "net.states"
    trainer.save_states(str(path))
    states, opt = pickle.loads(path.read_bytes())  # our own file: plain pickle is fine here
    setattr(opt.lr_scheduler if scheduler else opt, attr, value)
    path.write_bytes(pickle.dumps((states, opt)))
    return str(path)


@pytest.mark.parametrize("attr, value", [("lr", float("nan")), ("wd", float("inf")), ("momentum", float("nan")),
                                         ("lr", "0.1")])
def test_a_states_file_with_a_bad_hyper_parameter_is_refused(tmp_path, attr, value):
    path = _tampered(tmp_path, attr, value)
    net, trainer = _trainer()
    with pytest.raises(mx.MXNetError, match=rf"net\.states: the optimizer SGD in it has {attr} = "
                                            rf"{value!r}; a learning rate, weight decay, momentum ... must be a "
                                            rf"finite number".replace("(", r"\(").replace(")", r"\)")):
        trainer.load_states(path)
    _step(net, trainer)  # the trainer keeps its own optimizer and trains on
    assert np.isfinite(net.weight.data().asnumpy()).all()


def test_a_scheduler_with_a_nan_base_lr_is_refused(tmp_path):
    path = _tampered(tmp_path, "base_lr", float("nan"), scheduler=True)
    _, trainer = _trainer()
    with pytest.raises(mx.MXNetError, match=r"its learning-rate scheduler FactorScheduler in it has base_lr = nan"):
        trainer.load_states(path)


def test_a_sound_states_file_still_loads(tmp_path):
    path = _tampered(tmp_path, "lr", 0.05)
    net, trainer = _trainer()
    trainer.load_states(path)
    assert trainer.learning_rate == 0.05
    _step(net, trainer)
