"""gluon.rnn's fused layers against MXNet 1.9.1: its .params files load (MXNet's key names), outputs, final
states and input gradients match (``fixtures_rnn/``, made by its make_fixtures.py); hybridized or not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

HERE = Path(__file__).parent / "fixtures_rnn"
LAYERS = {
    "lstm_bi2": lambda: mx.gluon.rnn.LSTM(4, num_layers=2, bidirectional=True),
    "gru_ntc": lambda: mx.gluon.rnn.GRU(5, layout="NTC"),
    "rnn_tanh": lambda: mx.gluon.rnn.RNN(4, activation="tanh"),
}


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_mxnet(name, hybridize):
    with np.load(HERE / "rnn_layers.npz") as z:
        ref = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(name + "/")}
    layer = LAYERS[name]()
    layer.load_parameters(str(HERE / f"{name}.params"))  # input_size=0: MXNet's file gives the shapes
    if hybridize:
        layer.hybridize()
    x = mx.nd.array(ref["x"])
    x.attach_grad()
    batch = x.shape[0] if name == "gru_ntc" else x.shape[1]
    with mx.autograd.record():
        out, states = layer(x, layer.begin_state(batch_size=batch))
        loss = (out * out).sum() + sum((s * s).sum() for s in states)
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), ref["out"], rtol=1e-5, atol=1e-6)
    for i, s in enumerate(states):
        np.testing.assert_allclose(s.asnumpy(), ref[f"state{i}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), ref["xgrad"], rtol=1e-4, atol=1e-5)


def test_deferred_input_size_default_states_and_save_round_trip(tmp_path):
    layer = mx.gluon.rnn.GRU(6, num_layers=2, dropout=0.0)
    layer.initialize()
    out = layer(mx.nd.ones((4, 2, 3)))  # no states given: zeros, and only the output comes back
    assert out.shape == (4, 2, 6) and layer.l0_i2h_weight.shape == (18, 3) and layer.l1_i2h_weight.shape == (18, 6)
    layer.save_parameters(str(tmp_path / "gru.params"))
    assert "_unfused.1.h2h_weight" in mx.nd.load(str(tmp_path / "gru.params"))
    again = mx.gluon.rnn.GRU(6, num_layers=2)
    again.load_parameters(str(tmp_path / "gru.params"))
    np.testing.assert_array_equal(again(mx.nd.ones((4, 2, 3))).asnumpy(), out.asnumpy())


def test_trains_in_a_hybrid_sequential_with_trainer():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.rnn.LSTM(8, layout="NTC"))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (4, 5, 2)))
    target = mx.nd.zeros((4, 5, 8))
    losses = []
    for _ in range(15):
        with mx.autograd.record():
            loss = ((net(x) - target) ** 2).mean()
        loss.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    assert losses[-1] < 0.5 * losses[0]


def test_wrong_state_shape_is_a_clear_error():
    layer = mx.gluon.rnn.LSTM(4)
    layer.initialize()
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting \(1, 2, 4\), got \(1, 3, 4\)"):
        layer(mx.nd.ones((3, 2, 5)), [mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 3, 4))])
