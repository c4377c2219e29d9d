"""Module: a mistake in the names of inputs ends with an error that names both sides."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx


def _net():
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax")


def test_fit_with_a_label_the_module_does_not_take_names_both():
    it = mx.io.NDArrayIter(np.random.rand(20, 4).astype("float32"), np.zeros(20), batch_size=5, label_name="label")
    mod = mx.mod.Module(_net())
    with pytest.raises(mx.MXNetError, match=r"provides the label 'label' but the module's label input is "
                                            r"'softmax_label'"):
        mod.fit(it, num_epoch=1)


def test_bind_with_mismatched_label_names_warns_as_mxnet_does():
    mod = mx.mod.Module(_net())
    with pytest.warns(UserWarning, match=r"\['label'\] but the module's label names are \['softmax_label'\]"):
        mod.bind(data_shapes=[("data", (5, 4))], label_shapes=[("label", (5,))])


def test_matching_label_names_train():
    it = mx.io.NDArrayIter(np.random.rand(20, 4).astype("float32"), np.zeros(20), batch_size=5,
                           label_name="softmax_label")
    mod = mx.mod.Module(_net())
    mod.fit(it, num_epoch=1)
    assert mod.get_outputs()[0].shape == (5, 3)


def test_group2ctxs_places_inputs_by_ctx_group():
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.Variable("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        c = a + mx.sym.Variable("b")
    mod = mx.mod.Module(c, context=[mx.cpu(0)], data_names=["a", "b"], label_names=None,
                        group2ctxs={"dev1": mx.cpu(1), "dev2": [mx.cpu(2)]})
    mod.bind(data_shapes=[("a", (2, 3)), ("b", (2, 3))], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((2, 3)), mx.nd.ones((2, 3))]), is_train=True)
    mod.backward([mx.nd.ones((2, 3))])
    ga, gb = mod.get_input_grads()
    assert (ga.context, gb.context) == (mx.cpu(1), mx.cpu(2))
    assert ga.asnumpy().tolist() == [[2.0] * 3] * 2 and gb.asnumpy().tolist() == [[1.0] * 3] * 2
    with pytest.raises(mx.MXNetError, match=r"group2ctxs\['dev1'\] lists 3 contexts for 2 devices"):
        m2 = mx.mod.Module(c, context=[mx.cpu(0), mx.cpu(1)], data_names=["a", "b"], label_names=None,
                           group2ctxs={"dev1": [mx.cpu(1)] * 3})
        m2.bind(data_shapes=[("a", (2, 3)), ("b", (2, 3))])
