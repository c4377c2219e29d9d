"""ONNX files cross between MXNet 1.9.1 and mxasync.

Files exported by MXNet 1.9.1's own exporter (``fixtures/mxnet191_*.onnx``, made by
``fixtures/make_mxnet_onnx.py``) import here and give MXNet's outputs. When the MXNet venv is
present (``/work/venvs/mx191/bin/python`` or ``$MXASYNC_MXNET_PYTHON``), a file exported here
is imported by MXNet's ``mx.contrib.onnx.import_model`` and run there; otherwise that test skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

import numpy as np
import pytest

import mxasync as mx

pytest.importorskip("onnx")

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
MXNET_PYTHON = os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python")
needs_mxnet = pytest.mark.skipif(not os.path.exists(MXNET_PYTHON), reason=f"no MXNet 1.9.1 at {MXNET_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")


def test_fixtures_are_the_ones_described():
    with open(os.path.join(FIXTURES, "mxnet191.json")) as f:
        meta = json.load(f)
    for name, digest in meta["files"].items():
        with open(os.path.join(FIXTURES, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest, f"{name} changed; re-run make_mxnet_onnx.py"


@pytest.mark.parametrize("name", ["convnet", "mlp"])
def test_mxnet_export_imports_with_mxnet_outputs(name, close):
    path = os.path.join(FIXTURES, f"mxnet191_{name}.onnx")
    io = np.load(os.path.join(FIXTURES, f"mxnet191_{name}.npz"))
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    exe = sym.bind(mx.cpu(), args={**arg, "data": mx.nd.array(io["data"])}, aux_states=aux, grad_req="null")
    close(exe.forward(is_train=False)[0].asnumpy(), io["output"])
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    close(net(mx.nd.array(io["data"])).asnumpy(), io["output"])
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("data", tuple(io["data"].shape), 1)]


_MXNET_SIDE = r"""
import sys, numpy as np, mxnet as mx
sym, arg, aux = mx.contrib.onnx.import_model(sys.argv[1])
x = np.load(sys.argv[2])
data = [n for n in sym.list_arguments() if n not in arg][0]
exe = sym.bind(mx.cpu(), args={**arg, data: mx.nd.array(x)}, aux_states=aux, grad_req="null")
np.save(sys.argv[3], exe.forward(is_train=False)[0].asnumpy())
"""


@needs_mxnet
def test_our_export_imports_into_mxnet(tmp_path, close):
    data = mx.sym.Variable("data")
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv1")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = mx.sym.Concat(x, mx.sym.Convolution(x, kernel=(1, 1), num_filter=2, name="conv2"), dim=1, name="cat")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool2")
    x = mx.sym.Dropout(mx.sym.Flatten(x, name="flat"), p=0.5, name="drop")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=5, name="fc"), name="softmax")
    rng = np.random.RandomState(8)
    shapes, _, aux_shapes = sym.infer_shape(data=(2, 3, 8, 8))
    arg = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in zip(sym.list_arguments(), shapes, strict=True)
           if n not in ("data", "softmax_label")}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1.5, s))
           for n, s in zip(sym.list_auxiliary_states(), aux_shapes, strict=True)}
    xv = rng.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    want = sym.bind(mx.cpu(), args={**arg, "data": mx.nd.array(xv), "softmax_label": mx.nd.zeros((2,))},
                    aux_states=aux, grad_req="null").forward(is_train=False)[0].asnumpy()
    path = mx.onnx.export_model(sym, [arg, aux], [(2, 3, 8, 8)], np.float32, str(tmp_path / "ours.onnx"))
    np.save(tmp_path / "x.npy", xv)
    script = tmp_path / "mxnet_side.py"
    script.write_text(_MXNET_SIDE)
    run = subprocess.run([MXNET_PYTHON, str(script), path, str(tmp_path / "x.npy"), str(tmp_path / "out.npy")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    close(np.load(tmp_path / "out.npy"), want)
