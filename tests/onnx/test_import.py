"""ONNX files import as symbols and Gluon blocks that compute what ONNX Runtime computes: graphs in
the style of other frameworks' exporters (built here with onnx.helper) and our own exports."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.RandomState(7)


def _init(name, shape, scale=0.5, dtype=np.float32):
    return numpy_helper.from_array((RNG.uniform(-scale, scale, shape)).astype(dtype), name)


def _const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(values, dtype), name)


def _model(nodes, inits, x_shape, out_name="y", opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, [])], inits)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=helper.find_min_ir_version_for(opsets))
    onnx.checker.check_model(model)
    return model


def _compare(model, x, ort_run, close, tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    want = ort_run(path, {"x": x})[0]
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    exe = sym.bind(mx.cpu(), args={**arg, "x": mx.nd.array(x)}, aux_states=aux, grad_req="null")
    close(exe.forward(is_train=False)[0].asnumpy(), want)
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    close(net(mx.nd.array(x)).asnumpy(), want)
    return path


def test_convolutional_graph(tmp_path, ort_run, close):
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        n("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["bn"], epsilon=1e-5),
        n("Relu", ["bn"], ["r"]),
        n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p", "w2"], ["c2"], kernel_shape=[1, 1], group=2),
        n("Pad", ["c2", "pads"], ["pd"], mode="constant"),
        n("AveragePool", ["pd"], ["ap"], kernel_shape=[2, 2], strides=[1, 1]),
        n("Resize", ["ap", "", "scales"], ["rs"], mode="nearest"),
        n("Sigmoid", ["rs"], ["sg"]),
        n("Mul", ["rs", "sg"], ["sw"]),
        n("GlobalAveragePool", ["sw"], ["gp"]),
        n("Flatten", ["gp"], ["f"], axis=1),
        n("Gemm", ["f", "fw", "fb"], ["fc"], transB=1),
        n("Softmax", ["fc"], ["y"], axis=-1),
    ]
    inits = [_init("w", (4, 3, 3, 3)), _init("b", (4,)), _init("g", (4,)), _init("beta", (4,)),
             _init("mean", (4,), 0.1), numpy_helper.from_array(RNG.uniform(0.5, 1.5, 4).astype(np.float32), "var"),
             _init("w2", (6, 2, 1, 1)), _const("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"), _init("fw", (5, 6)),
             _init("fb", (5,))]
    model = _model(nodes, inits, [2, 3, 8, 8])
    path = _compare(model, RNG.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32), ort_run, close, tmp_path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta == {"input_tensor_data": [("x", (2, 3, 8, 8), TensorProto.FLOAT)], "output_tensor_data": [("y", ())]}


def test_transformer_style_graph(tmp_path, ort_run, close):
    """MatMul, LayerNormalization, GELU from Erf pieces, Transpose, Reshape, Slice, Gather, (Un)Squeeze, Concat."""
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w"], ["mm"]),
        n("Add", ["mm", "b"], ["lin"]),
        n("LayerNormalization", ["lin", "ln_g", "ln_b"], ["ln"], axis=-1, epsilon=1e-5),
        n("Div", ["ln", "sqrt2"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["e1"]),
        n("Mul", ["ln", "e1"], ["m"]), n("Mul", ["m", "half"], ["gelu"]),
        n("Transpose", ["gelu"], ["t"], perm=[1, 0, 2]),
        n("Reshape", ["t", "shape"], ["rs"]),
        n("Slice", ["rs", "starts", "ends", "axes"], ["sl"]),
        n("Gather", ["sl", "idx"], ["ga"], axis=3),
        n("Unsqueeze", ["ga", "uaxes"], ["us"]),
        n("Squeeze", ["us", "uaxes"], ["sq"]),
        n("Concat", ["sq", "sq"], ["cat"], axis=-1),
        n("Tanh", ["cat"], ["y"]),
    ]
    inits = [_init("w", (8, 8)), _init("b", (8,)), _init("ln_g", (8,)), _init("ln_b", (8,)),
             numpy_helper.from_array(np.array(np.sqrt(2), np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             _const("shape", [4, 2, 2, 4]), _const("starts", [1]), _const("ends", [4]), _const("axes", [0]),
             _const("idx", [3, 0, 1]), _const("uaxes", [1])]
    _compare(_model(nodes, inits, [2, 4, 8]), RNG.uniform(-1, 1, (2, 4, 8)).astype(np.float32), ort_run, close,
             tmp_path)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_graph(kind, tmp_path, ort_run, close):
    g = 4 if kind == "LSTM" else 3
    extra = {"linear_before_reset": 1} if kind == "GRU" else {}
    node = helper.make_node(kind, ["x", "W", "R", "B"], ["Y", "Y_h"], hidden_size=5, direction="bidirectional",
                            **extra)
    tail = [helper.make_node("Reduce" + "Sum", ["Y", "ax"], ["y"], keepdims=0)]
    inits = [_init("W", (2, g * 5, 3)), _init("R", (2, g * 5, 5)), _init("B", (2, 2 * g * 5)), _const("ax", [1])]
    _compare(_model([node] + tail, inits, [6, 2, 3]), RNG.uniform(-1, 1, (6, 2, 3)).astype(np.float32), ort_run,
             close, tmp_path)


def test_unsupported_operator_is_named(tmp_path):
    model = _model([helper.make_node("Hardmax", ["x"], ["y"])], [], [2, 3])
    with pytest.raises(mx.MXNetError, match="Hardmax"):
        mx.contrib.onnx.import_model(model)
