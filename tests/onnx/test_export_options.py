"""export_model's options as MXNet 1.9.1 has them, MXNet's example symbols, and its errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import mxasync as mx
from mxasync.train.networks import lenet, mlp

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def _params(sym, data_shape, seed=0):
    rng = np.random.RandomState(seed)
    args, _, auxs = sym.infer_shape(data=data_shape)
    names = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    shapes = dict(zip(sym.list_arguments(), args, strict=True))
    arg = {n: mx.nd.array(rng.uniform(-0.3, 0.3, shapes[n])) for n in names}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in zip(sym.list_auxiliary_states(), auxs, strict=True)}
    return arg, aux


def _ours(sym, arg, aux, x):
    exe = sym.bind(mx.cpu(), args={**arg, "data": mx.nd.array(x), "softmax_label": mx.nd.zeros(x.shape[:1])},
                   aux_states=aux, grad_req="null")
    return exe.forward(is_train=False)[0].asnumpy()


@pytest.mark.parametrize("opset", range(12, 18))
@pytest.mark.parametrize("network", [lenet, mlp])
def test_example_networks_every_opset(network, opset, tmp_path, ort_run, close, onnx_mod):
    sym = network(mean=0.2, std=0.3)  # standardisation in the graph: scalar ops
    arg, aux = _params(sym, (1, 1, 28, 28))
    x = np.random.RandomState(3).uniform(0, 1, (3, 1, 28, 28)).astype(np.float32)
    path = mx.onnx.export_model(sym, [arg, aux], [(1, 1, 28, 28)], np.float32, str(tmp_path / "m.onnx"),
                                dynamic=True, opset_version=opset)
    model = onnx_mod.load(path)
    assert model.opset_import[0].version == opset
    assert [i.name for i in model.graph.input][0] == "data" and "softmax_label" not in {i.name for i in model.graph.input}
    want = _ours(sym, arg, aux, x)
    close(ort_run(path, {"data": x})[0], want)
    back, barg, baux = mx.contrib.onnx.import_model(path)  # and back: the opset's forms import too
    exe = back.bind(mx.cpu(), args={**barg, "data": mx.nd.array(x)}, aux_states=baux, grad_req="null")
    close(exe.forward(is_train=False)[0].asnumpy(), want)


def test_mxnet_files_and_dynamic_input_shapes(tmp_path, ort_run, close, onnx_mod):
    """MXNet 1.9.1's own -symbol.json/.params (BatchNorm, Dropout, a skip connection) as file paths."""
    sym_file, params_file = os.path.join(FIXTURES, "lenet-symbol.json"), os.path.join(FIXTURES, "lenet-0000.params")
    sym = mx.sym.load(sym_file)
    loaded = mx.nd.load(params_file)
    arg = {k[4:]: v for k, v in loaded.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in loaded.items() if k.startswith("aux:")}
    with open(os.path.join(FIXTURES, "lenet-shapes.json")) as f:
        shape = tuple(json.load(f)["arg_shapes"]["data"])
    x = np.random.RandomState(4).uniform(-1, 1, (3,) + shape[1:]).astype(np.float32)
    path = mx.onnx.export_model(sym_file, params_file, input_shape=[(1,) + shape[1:]], input_type=np.float32,
                                onnx_file_path=str(tmp_path / "lenet.onnx"), dynamic=True,
                                dynamic_input_shapes=[(None,) + shape[1:]], run_shape_inference=True)
    dims = onnx_mod.load(path).graph.input[0].type.tensor_type.shape.dim
    assert not dims[0].HasField("dim_value") and [d.dim_value for d in dims[1:]] == list(shape[1:])
    close(ort_run(path, {"data": x})[0], _ours(sym, arg, aux, x))


def test_large_model_writes_external_data(tmp_path, ort_run, close, onnx_mod):
    sym = mlp(hidden=(64,))
    arg, aux = _params(sym, (1, 1, 28, 28))
    path = mx.onnx.export_model(sym, {**arg, **aux}, [(1, 1, 28, 28)], np.float32, str(tmp_path / "big.onnx"),
                                large_model=True)
    assert os.path.exists(str(tmp_path / "big.onnx.data"))
    assert os.path.getsize(path) < 20_000  # the tensors live in the data file
    x = np.random.RandomState(5).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    close(ort_run(path, {"data": x})[0], _ours(sym, arg, aux, x))
    back, barg, _ = mx.contrib.onnx.import_model(path)
    assert set(barg) >= {"fc1_weight", "fc2_weight"}


def test_op_without_converter_names_op_and_node(tmp_path, onnx_mod):
    sym = mx.sym.gammaln(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="lg")
    params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    with pytest.raises(mx.MXNetError, match=r"gammaln \(node 'lg'\) has no ONNX converter"):
        mx.onnx.export_model(sym, params, [(1, 3)], np.float32, str(tmp_path / "x.onnx"))


def test_bad_arguments(tmp_path, onnx_mod):
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    out = str(tmp_path / "x.onnx")
    with pytest.raises(ValueError, match="1 data inputs"):
        mx.onnx.export_model(sym, params, [(1, 3), (1, 3)], np.float32, out)
    with pytest.raises(ValueError, match="opset_version"):
        mx.onnx.export_model(sym, params, [(1, 3)], np.float32, out, opset_version=11)
    with pytest.raises(ValueError, match="files or objects"):
        mx.onnx.export_model(sym, 3, [(1, 3)], np.float32, out)
    with pytest.raises(ValueError, match="fc_bias"):  # a parameter left out is a data input, as in MXNet
        mx.onnx.export_model(sym, {"fc_weight": params["fc_weight"]}, [(1, 3)], np.float32, out)
    assert "Convolution" in mx.onnx.get_operator_support() and "RNN" in mx.onnx.get_operator_support()


def test_forms_onnx_cannot_express_are_named(tmp_path, onnx_mod):
    data = mx.sym.Variable("data")
    out = str(tmp_path / "x.onnx")
    bn = mx.sym.BatchNorm(data, axis=2, name="bn3")
    params = {n: mx.nd.ones((4,)) for n in bn.list_arguments()[1:] + bn.list_auxiliary_states()}
    with pytest.raises(mx.MXNetError, match=r"BatchNorm\(bn3\): axis=2"):
        mx.onnx.export_model(bn, params, [(2, 3, 4)], np.float32, out)
    rnn = mx.sym.RNN(data, mx.sym.Variable("p"), mx.sym.Variable("h"), state_size=3, num_layers=1,
                     mode="rnn_tanh", name="r")
    with pytest.raises(mx.MXNetError, match=r"RNN\(r\): its parameters must be constant"):
        mx.onnx.export_model(rnn, {}, [(5, 2, 4), (27,), (1, 2, 3)], np.float32, out)
