"""gluon.rnn cells: the same numbers as the fused layers, hybridized and not, with valid lengths."""

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon


def _copy_fused_into_cells(fused, stack):
    cell_params = stack.collect_params()
    for name, p in fused.collect_params().items():
        w = mx.nd.random.normal(shape=p.shape)
        p.set_data(w)
        cell_params[name].set_data(w)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_cells_match_fused_layer(mode, bidirectional):
    fused = {"lstm": gluon.rnn.LSTM, "gru": gluon.rnn.GRU,
             "rnn_tanh": lambda h, **kw: gluon.rnn.RNN(h, activation="tanh", **kw)}[mode](
        4, num_layers=2, bidirectional=bidirectional, input_size=3, prefix="m_")
    fused.initialize()
    stack = fused._unfuse()
    _copy_fused_into_cells(fused, stack)
    x = mx.nd.random.normal(shape=(5, 2, 3))
    x.attach_grad()
    with mx.autograd.record():
        out = fused(x)
    out.backward()
    gx_fused = x.grad.asnumpy().copy()
    with mx.autograd.record():
        out_cells, states = stack.unroll(5, x, layout="TNC", merge_outputs=True)
    out_cells.backward()
    np.testing.assert_allclose(out_cells.asnumpy(), out.asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), gx_fused, rtol=1e-4, atol=1e-5)
    assert len(states) == (2 if mode == "lstm" else 1) * 2 * (2 if bidirectional else 1)


def test_hybridized_cell_keeps_the_output_gradient():
    # the step returns (output, [output]): the same graph entry twice
    cell = gluon.rnn.RNNCell(4, input_size=3)
    cell.initialize()
    x = mx.nd.random.normal(shape=(2, 3, 3))
    grads = []
    for hybrid in (False, True):
        cell.hybridize(hybrid)
        x.attach_grad()
        with mx.autograd.record():
            out = cell.unroll(3, x, merge_outputs=True)[0]
        out.backward()
        grads.append(x.grad.asnumpy().copy())
    assert np.abs(grads[0]).sum() > 0
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_symbolic_unroll_names_and_shapes():
    cell = gluon.rnn.SequentialRNNCell()
    cell.add(gluon.rnn.LSTMCell(6, prefix="l0_"))
    cell.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(6, prefix="l1_")))
    inputs = [mx.sym.var(f"t{i}") for i in range(3)]
    outputs, states = cell.unroll(3, inputs)
    group = mx.sym.Group(outputs)
    _, outs, _ = group.infer_shape(t0=(2, 5), t1=(2, 5), t2=(2, 5))
    assert outs == [(2, 6)] * 3
    assert len(states) == 3
    bi = gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(3, prefix="l_"), gluon.rnn.LSTMCell(3, prefix="r_"),
                                     output_prefix="bi_")
    outputs, _ = bi.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    assert mx.sym.Group(outputs).list_outputs() == ["bi_t0_output", "bi_t1_output"]


def test_valid_length_masks_outputs_and_keeps_last_states():
    cell = gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(3, input_size=2), gluon.rnn.GRUCell(3, input_size=2))
    cell.initialize()
    x = mx.nd.random.normal(shape=(2, 4, 2))
    out, states = cell.unroll(4, x, valid_length=mx.nd.array([2, 4]), merge_outputs=True)
    assert out.shape == (2, 4, 6)
    assert np.all(out.asnumpy()[0, 2:] == 0)
    short, short_states = cell.unroll(2, x[0:1, :2], merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy()[0:1, :2], short.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy()[0:1], short_states[0].asnumpy(), rtol=1e-5, atol=1e-6)


def test_zoneout_and_dropout_cells_run_and_modified_cell_refuses_direct_use():
    base = gluon.rnn.LSTMCell(4, input_size=3)
    cell = gluon.rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    cell.initialize()
    with mx.autograd.record():
        out, _ = cell.unroll(3, mx.nd.ones((2, 3, 3)), merge_outputs=True)
    assert out.shape == (2, 3, 4)
    with pytest.raises(AssertionError):
        base.begin_state(batch_size=2)
    drop = gluon.rnn.DropoutCell(0.5)
    out, states = drop.unroll(3, mx.nd.ones((2, 3, 3)), merge_outputs=True)
    assert out.shape == (2, 3, 3) and states == []


def test_default_ctx_is_the_current_context():
    with mx.cpu(1):
        assert mx.Context.default_ctx == mx.cpu(1)
    assert mx.Context.default_ctx == mx.current_context()


def test_hybridized_bidirectional_layer_infers_its_input_size_inside_a_network():
    # both directions' first weights are unknown: _rnn_param_concat shares the rest of the flat parameters
    net = gluon.nn.HybridSequential()
    net.add(gluon.rnn.LSTM(4, bidirectional=True), gluon.nn.Dense(3))
    net.hybridize()
    net.initialize()
    assert net(mx.nd.ones((2, 3, 5))).shape == (2, 3)  # TNC in, Dense flattens the rest
    assert net[0].l0_i2h_weight.shape == (16, 5) and net[0].r0_i2h_weight.shape == (16, 5)
