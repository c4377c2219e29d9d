"""mx.rnn cells: the graphs they build (argument and output names), their outputs and gradients against
MXNet 1.9.1 (``fixtures/mxnet_rnn_cells.npz``, made by fixtures/make_fixtures.py), and the helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

FIXTURE = Path(__file__).parent / "fixtures" / "mxnet_rnn_cells.npz"
T, N, I, H = 3, 2, 4, 5  # noqa: E741 - steps, batch, input and hidden sizes


def _networks():
    x = mx.sym.Variable("data")
    yield "lstm", mx.rnn.LSTMCell(H, prefix="lstm_").unroll(T, x, layout="NTC", merge_outputs=True)[0]
    yield "gru", mx.rnn.GRUCell(H, prefix="gru_").unroll(T, x, layout="NTC", merge_outputs=True)[0]
    yield "rnn_relu", mx.rnn.RNNCell(H, activation="relu", prefix="rnn_").unroll(T, x, merge_outputs=True)[0]
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(H, prefix="l0_"))
    stack.add(mx.rnn.GRUCell(H, prefix="l1_"))
    outputs, states = stack.unroll(T, x, layout="NTC", merge_outputs=False)
    yield "stack_states", mx.sym.Group(outputs + states)
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix="f_"), mx.rnn.GRUCell(H, prefix="b_"))
    yield "bidirectional", bi.unroll(T, x, layout="TNC", merge_outputs=True)[0]
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode="lstm", bidirectional=True, prefix="fused_",
                                get_next_state=True)
    outputs, states = fused.unroll(T, x, layout="NTC", merge_outputs=True)
    yield "fused", mx.sym.Group([outputs] + states)
    residual = mx.rnn.ResidualCell(mx.rnn.GRUCell(I, prefix="res_"))
    yield "residual", residual.unroll(T, x, layout="NTC", merge_outputs=True)[0]


NETWORKS = dict(_networks())


def _fixture(name):
    with np.load(FIXTURE) as z:
        arrays = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(name + "/")}
    return json.loads(str(arrays.pop("spec"))), arrays


@pytest.mark.parametrize("name", list(NETWORKS))
def test_cells_build_mxnets_graph_and_values(name):
    spec, a = _fixture(name)
    net = NETWORKS[name]
    assert net.list_arguments() == spec["arguments"]
    assert net.list_outputs() == spec["outputs"]
    args = {k: mx.nd.array(a[f"arg/{k}"]) for k in spec["arguments"]}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = net.bind(mx.cpu(), args, args_grad=grads)
    outs = exe.forward(is_train=True)
    heads = [mx.nd.array(a[f"head{i}"]) for i in range(len(outs))]
    exe.backward(heads)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), a[f"out{i}"], rtol=1e-5, atol=1e-6, err_msg=f"{name} output {i}")
    for k in spec["arguments"]:
        np.testing.assert_allclose(grads[k].asnumpy(), a[f"grad/{k}"], rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} gradient of {k}")


def test_fused_cell_unpacks_packs_and_unfuses_to_the_same_network():
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode="gru", bidirectional=True, prefix="g_")
    x = mx.sym.Variable("data")
    out_fused = fused.unroll(T, x, layout="TNC", merge_outputs=True)[0]
    (size,), = [s for n, s in zip(out_fused.list_arguments(), out_fused.infer_shape(data=(T, N, I))[0],
                                   strict=True) if n == "g_parameters"]
    params = mx.nd.array(np.random.default_rng(1).uniform(-0.4, 0.4, size).astype(np.float32))
    data = mx.nd.array(np.random.default_rng(2).uniform(-1, 1, (T, N, I)).astype(np.float32))
    expected = out_fused.bind(mx.cpu(), {"data": data, "g_parameters": params}).forward()[0].asnumpy()
    unpacked = fused.unpack_weights({"g_parameters": params})
    assert "g_l0_i2h_r_weight" in unpacked and unpacked["g_r1_h2h_o_bias"].shape == (H,)
    np.testing.assert_array_equal(fused.pack_weights(unpacked)["g_parameters"].asnumpy(), params.asnumpy())
    stack = fused.unfuse()
    out_stack = stack.unroll(T, x, layout="TNC", merge_outputs=True)[0]
    weights = stack.pack_weights(unpacked)
    got = out_stack.bind(mx.cpu(), {"data": data, **{k: weights[k] for k in out_stack.list_arguments()
                                                      if k != "data"}}).forward()[0].asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_fused_rnn_initializer_sets_the_forget_bias():
    cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode="lstm", prefix="f_", forget_bias=2.5)
    out = cell.unroll(2, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)[0]
    mod = mx.mod.Module(out, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 4, 6))], for_training=False)
    mod.init_params(mx.init.Xavier())
    parts = cell.unpack_weights(mod.get_params()[0])
    assert np.all(parts["f_l0_i2h_f_bias"].asnumpy() == 2.5) and np.all(parts["f_l0_i2h_i_bias"].asnumpy() == 0)
    assert np.abs(parts["f_l0_i2h_i_weight"].asnumpy()).max() > 0


def test_bucket_sentence_iter_batches_by_length():
    sentences = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [1, 2], [3, 4, 5], [6, 7, 8]]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[2, 3, 4], invalid_label=0)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [2, 3]  # the one 4-long sentence does not fill a batch
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (2, b.bucket_key) and b.provide_data[0].shape == (2, b.bucket_key)
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        assert np.all(label[:, -1] == 0)


def test_encode_sentences_and_unknown_words():
    coded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c"]], invalid_label=0, start_label=0)
    assert coded == [[1, 2], [2, 3]] and vocab["\n"] == 0
    with pytest.raises(KeyError, match="unknown token 'z'"):
        mx.rnn.encode_sentences([["z"]], vocab=vocab)
    assert mx.rnn.encode_sentences([["z"]], vocab=dict(vocab), unknown_token="<unk>")[0] == [[4]]


def test_rnn_checkpoint_round_trip(tmp_path):
    cell = mx.rnn.LSTMCell(H, prefix="lstm_")
    out = cell.unroll(T, mx.sym.Variable("data"), merge_outputs=True)[0]
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(N, T, I))[0], strict=True))
    args = {k: mx.nd.array(np.random.default_rng(3).uniform(size=s)) for k, s in shapes.items() if k != "data"}
    mx.rnn.save_rnn_checkpoint(cell, str(tmp_path / "m"), 1, out, args, {})
    saved = mx.nd.load(str(tmp_path / "m-0001.params"))
    assert "arg:lstm_i2h_f_weight" in saved and "arg:lstm_i2h_weight" not in saved
    _, loaded, _ = mx.rnn.load_rnn_checkpoint(cell, str(tmp_path / "m"), 1)
    for k, v in args.items():
        np.testing.assert_array_equal(loaded[k].asnumpy(), v.asnumpy())


def test_zero_dimensions_are_unknown_in_shape_inference():
    data = mx.sym.Variable("data")
    out = data + mx.sym.zeros((0, 4))
    assert out.infer_shape(data=(3, 4))[1] == [(3, 4)]
    assert out.infer_shape_partial()[1] == [(0, 4)]
    assert out.infer_shape() == (None, None, None)
    got = out.bind(mx.cpu(), {"data": mx.nd.ones((3, 4))}).forward()[0]
    np.testing.assert_array_equal(got.asnumpy(), np.ones((3, 4)))


def test_every_cell_is_reachable_from_rnn_cell_as_in_mxnet():
    from mxasync.rnn import rnn_cell

    assert rnn_cell.FusedRNNCell is mx.rnn.FusedRNNCell and rnn_cell.BidirectionalCell is mx.rnn.BidirectionalCell
    with pytest.raises(AttributeError):
        rnn_cell.NoSuchCell  # noqa: B018
