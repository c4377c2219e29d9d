"""Issue 25, item 7: .states files are read through a restricted unpickler (ours and MXNet's load;
a crafted file that would run code is refused and runs nothing)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon, kvstore, optimizer

pytestmark = pytest.mark.fault

FIXTURES = Path(__file__).parent / "fixtures"


class _Payload:
    """Pickles as a call to os.system: unpickling it would create the marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _crafted(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.states"
    path.write_bytes(pickle.dumps({0: (_Payload(marker), mx.nd.ones((2,)))}))
    return path, marker


def _trainer():
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize()
    return gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})


def test_the_crafted_file_really_runs_code_through_plain_pickle(tmp_path):
    path, marker = _crafted(tmp_path)
    pickle.loads(path.read_bytes())  # the check below is only meaningful if this does run it
    assert marker.exists()


@pytest.mark.parametrize("how", ["trainer", "module", "kvstore", "updater"])
def test_a_hostile_states_file_is_refused_and_runs_nothing(tmp_path, how):
    path, marker = _crafted(tmp_path)
    with pytest.raises(mx.MXNetError) as err:
        if how == "trainer":
            _trainer().load_states(str(path))
        elif how == "module":
            data = mx.sym.Variable("data")
            mod = mx.mod.Module(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), label_names=None)
            mod.bind([("data", (1, 2))])
            mod.init_params()
            mod.init_optimizer()
            mod.load_optimizer_states(str(path))
        elif how == "kvstore":
            kv = kvstore.create("local")
            kv.set_optimizer(optimizer.create("sgd"))
            kv.load_optimizer_states(str(path))
        else:
            optimizer.get_updater(optimizer.create("sgd")).set_states(path.read_bytes(), str(path))
    assert not marker.exists(), "the file's code ran"
    message = str(err.value)
    assert "hostile.states" in message and "refusing to load posix.system" in message, message


def test_our_states_round_trip_with_the_optimizer_and_scheduler(tmp_path):
    opt = optimizer.create("adam", learning_rate=0.1, lr_scheduler=mx.lr_scheduler.FactorScheduler(5, 0.5))
    updater = optimizer.get_updater(opt)
    weight, grad = mx.nd.ones((3,)), mx.nd.ones((3,)) * 0.5
    updater(0, grad, weight)
    blob = updater.get_states(dump_optimizer=True)
    again = optimizer.get_updater(optimizer.create("sgd"))
    again.set_states(blob)
    assert type(again.optimizer) is type(opt)
    assert isinstance(again.optimizer.lr_scheduler, mx.lr_scheduler.FactorScheduler)
    for mine, theirs in zip(updater.states[0], again.states[0], strict=True):
        np.testing.assert_array_equal(theirs.asnumpy(), mine.asnumpy())


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_mxnet_states_files_load(name):
    """Files written by MXNet 1.9.1 (tests/faults/make_mxnet_states.py): MXNet's NDArray, optimizer
    and scheduler classes load as ours, and training goes on from them as in MXNet."""
    expected = json.loads((FIXTURES / "mxnet_states.json").read_text())[name]
    updater = optimizer.get_updater(optimizer.create(name, learning_rate=0.1))
    updater.set_states((FIXTURES / f"mxnet_{name}.states").read_bytes())
    state = updater.states[0]
    state = state if isinstance(state, (tuple, list)) else (state,)
    for got, want in zip(state, expected["state"], strict=True):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    if expected["dump_optimizer"]:
        assert type(updater.optimizer).__name__ == "SGD"
        assert updater.optimizer.lr_scheduler.factor == 0.5
