"""Symbols built by mxasync load in the real MXNet 1.9.1 with the same structure and shapes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mxasync import name as mx_name
from mxasync import symbol as sym

MX_PYTHON = Path(os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python"))


@pytest.mark.skipif(not MX_PYTHON.exists(), reason=f"no MXNet 1.9.1 at {MX_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_mxnet_loads_our_symbols(tmp_path):
    with mx_name.NameManager():
        h = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=4, name="c1")
        h = sym.BatchNorm(h, fix_gamma=False)
        h = sym.Activation(h, act_type="relu") * 2 + 1
        h = sym.FullyConnected(sym.Flatten(h), num_hidden=5)
        net = sym.SoftmaxOutput(sym.maximum(h, 0.5) - sym.Variable("bias2"), name="softmax")
    (tmp_path / "net.json").write_text(net.tojson())
    script = ("import json, sys, mxnet as mx\n"
              "s = mx.sym.load(sys.argv[1])\n"
              "a, o, x = s.infer_shape(data=(2, 3, 6, 6), bias2=(2, 5))\n"
              "print(json.dumps([s.list_arguments(), s.list_auxiliary_states(), s.list_outputs(), a, o, x,"
              " s.tojson()]))\n")
    res = subprocess.run([str(MX_PYTHON), "-c", script, str(tmp_path / "net.json")], capture_output=True,
                         text=True, timeout=120, env={"MXNET_SUBGRAPH_BACKEND": "NONE"})
    assert res.returncode == 0, res.stderr
    args, aux, outs, a, o, x, text = json.loads(res.stdout.strip().splitlines()[-1])
    assert args == net.list_arguments() and aux == net.list_auxiliary_states() and outs == net.list_outputs()
    ours = net.infer_shape(data=(2, 3, 6, 6), bias2=(2, 5))
    assert [[list(s) for s in group] for group in ours] == [a, o, x]
    assert text == net.tojson()  # and MXNet writes back the very same bytes
