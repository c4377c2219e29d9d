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
