"""Module checkpoints: MXNet 1.9.1's load here, ours load in MXNet, optimizer states resume training."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import model
from mxasync.io import NDArrayIter
from mxasync.module import Module

FIXTURES = Path(__file__).with_name("fixtures")
MXNET_PYTHON = Path(os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python"))


def _probe():
    io = np.load(FIXTURES / "bn_mlp-io.npz")
    return io["x"], io["y"], io["probe_out"]


def test_mxnet_checkpoint_loads_and_predicts_the_same():
    x, y, expected = _probe()
    mod = Module.load(str(FIXTURES / "bn_mlp"), 2, context=mx.cpu())
    mod.bind(data_shapes=[("data", (20, 16))], label_shapes=[("softmax_label", (20,))], for_training=False)
    out = mod.predict(NDArrayIter(x[:20], y[:20], 20)).asnumpy()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    arg, aux = mod.get_params()
    assert sorted(aux) == ["bn1_moving_mean", "bn1_moving_var"]
    assert sorted(arg) == ["bn1_beta", "bn1_gamma", "fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def test_mxnet_checkpoint_keeps_training():
    x, y, _ = _probe()
    sym, arg, aux = model.load_checkpoint(str(FIXTURES / "bn_mlp"), 2)
    mod = Module(sym)
    mod.fit(NDArrayIter(x, y, 20), num_epoch=4, begin_epoch=2, arg_params=arg, aux_params=aux,
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    out = mod.predict(NDArrayIter(x, y, 20)).asnumpy()
    assert (out.argmax(1) == y).mean() > 0.85


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_optimizer_states_resume_exactly(nets, tmp_path):
    """Save after 2 epochs with momentum states, load, train 1 more: equal to 3 epochs in one go."""
    (x, y) = nets.digits_flat("train")
    x, y = x[:128], y[:128]
    sym = nets.mlp(16)
    args, _ = nets.fixed_params(sym, (1, 64))
    params = {"learning_rate": 0.1, "momentum": 0.9}

    straight = Module(sym)
    straight.fit(NDArrayIter(x, y, 32), num_epoch=3, arg_params=args, optimizer_params=params)
    first = Module(sym)
    first.fit(NDArrayIter(x, y, 32), num_epoch=2, arg_params=args, optimizer_params=params)
    prefix = str(tmp_path / "mlp")
    first.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert (tmp_path / "mlp-0002.states").exists()
    resumed = Module.load(prefix, 2, load_optimizer_states=True)
    resumed.fit(NDArrayIter(x, y, 32), num_epoch=3, begin_epoch=2, optimizer_params=params)
    for name, value in straight.get_params()[0].items():
        np.testing.assert_allclose(resumed.get_params()[0][name].asnumpy(), value.asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)


_MXNET_SCRIPT = """
import json, sys
import numpy as np
import mxnet as mx
prefix, n = sys.argv[1], int(sys.argv[2])
sym, arg, aux = mx.model.load_checkpoint(prefix, n)
mod = mx.mod.Module(sym, context=mx.cpu())
x = np.load(prefix + "-probe.npy")
mod.bind(data_shapes=[("data", x.shape)], for_training=False)
mod.set_params(arg, aux)
out = mod.predict(mx.io.NDArrayIter(x, batch_size=len(x))).asnumpy()
print(json.dumps({"out": out.tolist(), "args": sorted(arg), "aux": sorted(aux)}))
"""


@pytest.mark.skipif(not MXNET_PYTHON.exists(), reason=f"no MXNet 1.9.1 at {MXNET_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_our_checkpoint_loads_in_mxnet(nets, tmp_path):
    x, y, _ = _probe()
    sym = nets.bn_mlp(8, classes=4)
    mod = Module(sym)
    mod.fit(NDArrayIter(x, y, 20), num_epoch=2, optimizer_params={"learning_rate": 0.1})
    prefix = str(tmp_path / "ours")
    mod.save_checkpoint(prefix, 2)
    np.save(prefix + "-probe.npy", x[:10])
    ours = mod.predict(NDArrayIter(x[:10], None, 10)).asnumpy()
    run = subprocess.run([str(MXNET_PYTHON), "-c", _MXNET_SCRIPT, prefix, "2"], capture_output=True, text=True,
                         timeout=120, env={"MXNET_SUBGRAPH_BACKEND": "NONE", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    theirs = json.loads(run.stdout.strip().splitlines()[-1])
    assert theirs["aux"] == ["bn1_moving_mean", "bn1_moving_var"]
    np.testing.assert_allclose(np.array(theirs["out"]), ours, rtol=1e-4, atol=1e-5)
