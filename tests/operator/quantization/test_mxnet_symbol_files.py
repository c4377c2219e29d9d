"""Symbol files quantized by MXNet 1.9.1 (``quantize_net``, MKLDNN fusion: ``_sg_mkldnn_conv`` /
``_sg_mkldnn_fully_connected`` carrying their subgraphs) load here and give MXNet's outputs: every
int8 / uint8 layer output and the float result, bit for bit (tests/fixtures/quantization)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import mxasync as mx

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "quantization"
NETS = [(net, calib) for net in ("resnet", "mobilenet") for calib in ("naive", "entropy")]


@pytest.mark.parametrize("net,calib", NETS)
def test_quantized_symbol_file_gives_mxnet_outputs(net, calib):
    with np.load(FIXTURES / f"{net}-io.npz") as d:
        io = dict(d)
    sym, args, aux = mx.model.load_checkpoint(str(FIXTURES / f"{net}-{calib}"), 0)
    internals = sym.get_internals()
    layers = [k.split("/", 1)[1] for k in io if k.startswith(calib + "/")]
    assert layers, "the fixture records the quantized layers' outputs"
    group = mx.sym.Group([sym] + [internals[n + "_output"] for n in layers])
    exe = group.bind(mx.cpu(), {**args, "data": mx.nd.array(io["calib"])}, aux_states=aux, grad_req="null")
    outs = exe.forward(is_train=False)
    np.testing.assert_array_equal(outs[0].asnumpy(), io[calib])
    for name, out in zip(layers, outs[1:], strict=True):
        want = io[f"{calib}/{name}"]
        assert out.dtype == want.dtype, f"{name}: {out.dtype} != MXNet's {want.dtype}"
        np.testing.assert_array_equal(out.asnumpy(), want, err_msg=name)


def test_subgraph_round_trips_through_json():
    text = (FIXTURES / "resnet-naive-symbol.json").read_text()
    sym = mx.sym.load_json(text)
    again = json.loads(sym.tojson())
    orig = json.loads(text)
    fused = [n for n in orig["nodes"] if n.get("subgraphs")]
    written = {n["name"]: n for n in again["nodes"]}
    assert fused
    for node in fused:
        assert written[node["name"]]["subgraphs"] == node["subgraphs"]
        assert written[node["name"]]["attrs"] == node["attrs"]


def test_aux_states_in_the_middle_of_the_inputs():
    """The fused conv's BatchNorm moving statistics are auxiliary states, as in MXNet."""
    sym = mx.sym.load(str(FIXTURES / "resnet-naive-symbol.json"))
    aux = sym.list_auxiliary_states()
    assert aux and all(n.endswith(("running_mean", "running_var")) for n in aux)
    assert not set(aux) & set(sym.list_arguments())


def test_gluon_symbol_block_imports_quantized_net():
    with np.load(FIXTURES / "resnet-io.npz") as d:
        x, want = d["calib"], d["entropy"]
    net = mx.gluon.SymbolBlock.imports(str(FIXTURES / "resnet-entropy-symbol.json"), ["data"],
                                       str(FIXTURES / "resnet-entropy-0000.params"))
    np.testing.assert_array_equal(net(mx.nd.array(x)).asnumpy(), want)
