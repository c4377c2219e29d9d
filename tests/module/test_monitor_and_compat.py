"""mx.mon.Monitor, and Module behaviours MXNet scripts rely on (values and names checked against MXNet 1.9.1)."""

from collections import namedtuple

import numpy as np
import pytest

import mxasync as mx


def _mlp():
    x = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc_0")
    x = mx.sym.Activation(x, act_type="sigmoid", name="act_0")
    return mx.sym.LinearRegressionOutput(x, name="out")


def test_monitor_sees_outputs_gradients_and_arguments():
    mod = mx.mod.Module(_mlp(), label_names=["out_label"], context=mx.cpu())
    mod.bind(data_shapes=[("data", (1, 2))], label_shapes=[("out_label", (1, 2))])
    mod.init_params(initializer=mx.init.One())
    mon = mx.mon.Monitor(1, pattern=".*", sort=True)
    mod.install_monitor(mon)
    batch = mx.io.DataBatch([mx.nd.array([[0.5, -1.0]])], [mx.nd.array([[0.0, 1.0]])])
    mon.tic()
    mod.forward_backward(batch)
    res = mon.toc()
    # MXNet 1.9.1 names: outputs, backward outputs (indexed when an op has several inputs), arguments
    assert [k for _, k, _ in res] == [
        "act_0_backward_output", "act_0_output", "data", "fc_0_backward_output0", "fc_0_backward_output1",
        "fc_0_backward_output2", "fc_0_bias", "fc_0_output", "fc_0_weight", "out_backward_output0",
        "out_backward_output1", "out_label", "out_output"]
    stats = {k: float(v.strip()) for _, k, v in res}
    # default statistic: norm(x) / sqrt(size)
    assert stats["fc_0_output"] == pytest.approx(np.linalg.norm([0.5, 0.5]) / np.sqrt(2), rel=1e-6)
    assert stats["fc_0_weight"] == pytest.approx(1.0)
    mon.tic()  # interval 1: the next batch is collected too, with step 2
    mod.forward(batch)
    assert {n for n, _, _ in mon.toc()} == {2}
    assert mon.toc() == []  # not activated any more


def test_backward_without_any_gradient_is_a_noop():
    mod = mx.mod.Module(mx.sym.Dropout(mx.sym.Variable("data"), 0.5), label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 3))]))
    mod.update()
    assert mod.get_outputs()[0].shape == (2, 3)


def test_forward_with_a_batch_without_label_field():
    Batch = namedtuple("Batch", ["data"])
    mod = mx.mod.Module(mx.sym.Variable("data") * 2, label_names=None)
    mod.bind(data_shapes=[("data", (1, 4))])
    mod.init_params()
    mod.forward(Batch([mx.nd.ones((3, 2))]))
    assert mod.get_outputs()[0].shape == (3, 2)


def test_set_params_error_types():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (1, 2))])
    good = {"fc_weight": mx.nd.ones((2, 2)), "fc_bias": mx.nd.zeros(2)}
    mod.set_params(good, {})
    with pytest.raises(RuntimeError):
        mod.set_params({"fc_weight": mx.nd.ones((2, 2))}, {}, allow_missing=False, force_init=True)
    extra = dict(good, other=mx.nd.ones(1))
    with pytest.raises(ValueError, match="other"):
        mod.set_params(extra, {}, allow_missing=True, force_init=True)
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True, force_init=True)


def test_state_inputs_get_and_set():
    data, state = mx.sym.Variable("data"), mx.sym.Variable("state")
    mod = mx.mod.Module(data + state, label_names=None, state_names=["state"],
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 3))], for_training=False)
    mod.init_params()
    batch = mx.io.DataBatch([mx.nd.ones((4, 3))], [])
    mod.set_states(value=2)
    mod.forward(batch)
    assert np.allclose(mod.get_outputs()[0].asnumpy(), 3)
    mod.set_states(states=mod.get_outputs(merge_multi_context=False))
    assert np.allclose(mod.get_states()[0].asnumpy(), 3)
    mod.forward(batch)
    assert np.allclose(mod.get_outputs()[0].asnumpy(), 4)
    with pytest.raises(mx.MXNetError):
        mod.set_states(states=[], value=1)


def test_outputs_merged_on_their_layout_batch_axis():
    sym = mx.sym.Activation(data=mx.sym.Variable("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = np.random.default_rng(0).standard_normal((3, 8, 7)).astype(np.float32)
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(x)], label=None))
    assert [p.shape for p in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7), (3, 4, 7)]
    assert np.allclose(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
