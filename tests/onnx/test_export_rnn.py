"""The fused RNN op (Gluon's LSTM/GRU layers, mx.rnn's fused cell) exports to ONNX LSTM/GRU/RNN nodes."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon


def _language_model(cell, **kw):
    d = 2 if kw.get("bidirectional") else 1
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(20, 8))
        net.add(cell(16, num_layers=2, layout="NTC", input_size=8, **kw))
        net.add(gluon.nn.Dense(20, flatten=False, in_units=16 * d))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


@pytest.mark.parametrize("cell, kw", [(gluon.rnn.LSTM, {}), (gluon.rnn.GRU, {}),
                                      (gluon.rnn.LSTM, {"bidirectional": True}),
                                      (gluon.rnn.RNN, {"activation": "relu"})],
                         ids=["lstm", "gru", "bilstm", "rnn_relu"])
def test_language_model_matches_onnxruntime_and_round_trips(cell, kw, tmp_path, ort_run, close, onnx_mod):
    net = _language_model(cell, **kw)
    rng = np.random.RandomState(1)
    x1 = rng.randint(0, 20, (1, 5)).astype(np.float32)
    x3 = rng.randint(0, 20, (3, 7)).astype(np.float32)  # another batch and sequence length
    want1, want3 = net(mx.nd.array(x1)).asnumpy(), net(mx.nd.array(x3)).asnumpy()
    net.export(str(tmp_path / "lm"))
    path = mx.onnx.export_model(str(tmp_path / "lm-symbol.json"), str(tmp_path / "lm-0000.params"), [(1, 5)],
                                np.float32, str(tmp_path / "lm.onnx"), dynamic=True)
    onnx_mod.checker.check_model(path)
    kinds = {n.op_type for n in onnx_mod.load(path).graph.node}
    assert {"LSTM", "GRU", "RNN"} & kinds
    close(ort_run(path, {"data": x1})[0], want1)
    close(ort_run(path, {"data": x3})[0], want3)
    back = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    close(back(mx.nd.array(x3)).asnumpy(), want3)


def test_symbolic_fused_lstm_with_state_outputs(tmp_path, ort_run, close, onnx_mod):
    """The RNN op with its final states as outputs, parameters as one variable (mx.rnn's fused cell)."""
    from mxasync.operator.nn.rnn import rnn_param_size

    data = mx.sym.Variable("data")
    rnn = mx.sym.RNN(data, mx.sym.Variable("rnn_parameters"), mx.sym.Variable("rnn_state"),
                     mx.sym.Variable("rnn_state_cell"), state_size=6, num_layers=2, mode="lstm",
                     state_outputs=True, name="rnn")
    size = rnn_param_size("lstm", 4, 6, 2, False)
    rng = np.random.RandomState(2)
    params = {"rnn_parameters": rng.uniform(-0.5, 0.5, size).astype(np.float32)}
    x, h0, c0 = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((5, 2, 4), (2, 2, 6), (2, 2, 6)))
    want = rnn.eval(mx.cpu(), data=mx.nd.array(x), rnn_state=mx.nd.array(h0), rnn_state_cell=mx.nd.array(c0),
                    rnn_parameters=mx.nd.array(params["rnn_parameters"]))
    path = mx.onnx.export_model(rnn, params, [(5, 2, 4), (2, 2, 6), (2, 2, 6)], np.float32,
                                str(tmp_path / "rnn.onnx"))
    outs = ort_run(path, {"data": x, "rnn_state": h0, "rnn_state_cell": c0})
    assert [o.name for o in onnx_mod.load(path).graph.output] == ["rnn", "rnn1", "rnn2"]  # MXNet's names
    for got, w in zip(outs, want, strict=True):
        close(got, w.asnumpy())


def test_mx_rnn_fused_cell_unrolled(tmp_path, ort_run, close):
    """mx.rnn's FusedRNNCell (GRU, two layers, zero begin states), batch-major, then a dense layer."""
    cell = mx.rnn.FusedRNNCell(8, num_layers=2, mode="gru", prefix="gru_", get_next_state=False)
    out, _ = cell.unroll(5, inputs=mx.sym.Variable("data"), layout="NTC", merge_outputs=True)
    out = mx.sym.FullyConnected(mx.sym.Reshape(out, shape=(-1, 8)), num_hidden=4, name="pred")
    shapes, _, _ = out.infer_shape(data=(2, 5, 3))
    rng = np.random.RandomState(3)
    params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in zip(out.list_arguments(), shapes, strict=True)
              if n != "data"}
    x = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    want = out.eval(mx.cpu(), data=mx.nd.array(x), **params)[0].asnumpy()
    path = mx.onnx.export_model(out, params, [(2, 5, 3)], np.float32, str(tmp_path / "fused.onnx"),
                                keep_initializers_as_inputs=False)
    close(ort_run(path, {"data": x})[0], want)
