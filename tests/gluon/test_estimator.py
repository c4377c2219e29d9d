"""gluon.contrib.estimator: Estimator.fit with validation and a CheckpointHandler, then by batches, gives
MXNet 1.9.1's weights, metrics and checkpoint files (the expected values are MXNet's for the same script)."""

import os
import warnings

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon
from mxasync.gluon.contrib.estimator import CheckpointHandler, EarlyStoppingHandler, Estimator, StoppingHandler


def _setup():
    rs = np.random.RandomState(0)
    x = rs.rand(24, 5).astype("float32")
    y = (x.sum(axis=1) > 2.5).astype("float32")
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=8)
    net = gluon.nn.Dense(2, in_units=5)
    net.initialize(mx.init.Constant(0.1))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    return loader, net, Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, context=mx.cpu())


def test_fit_gives_mxnets_weights_metrics_and_checkpoints(tmp_path):
    loader, net, est = _setup()
    est.fit(loader, val_data=loader, epochs=3, event_handlers=[CheckpointHandler(str(tmp_path), max_checkpoints=2)])
    np.testing.assert_allclose(net.weight.data().asnumpy(),
                               [[-0.09371, 0.17816, -0.15986, -0.05117, -0.04701],
                                [0.29371, 0.02184, 0.35986, 0.25117, 0.24701]], atol=1e-5)
    got = {m.name: m.get()[1] for m in est.train_metrics + est.val_metrics}
    assert got == pytest.approx({"training accuracy": 0.58333, "training softmaxcrossentropyloss": 0.72089,
                                 "validation accuracy": 0.91667, "validation softmaxcrossentropyloss": 0.58904},
                                abs=1e-4)
    assert sorted(os.listdir(tmp_path)) == ["model-epoch1batch6.params", "model-epoch1batch6.states",
                                            "model-epoch2batch9.params", "model-epoch2batch9.states"]
    est.fit(loader, batches=4)
    np.testing.assert_allclose(net.bias.data().asnumpy(), [0.22657, -0.22657], atol=1e-5)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(loader, epochs=1, batches=1)


def test_early_stopping_stops_when_the_monitor_stalls():
    loader, _, est = _setup()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        early = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=0, mode="max", min_delta=10.0)
    stopper = StoppingHandler(max_epoch=5)
    est.fit(loader, epochs=5, event_handlers=[early, stopper])
    assert early.stop_training and early.stopped_epoch == 1 and early.current_epoch == 2
