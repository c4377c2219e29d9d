"""A checkpoint that lacks a parameter of its symbol: an MXNetError (also a KeyError) naming it and the file."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx


def test_missing_weight_named(tmp_path):
    prefix = str(tmp_path / "net")
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="softmax")
    mx.model.save_checkpoint(prefix, 1, net, {"fc_bias": mx.nd.zeros((3,))}, {})
    it = mx.io.NDArrayIter(np.ones((4, 4), np.float32), np.zeros(4, np.float32), batch_size=2)
    mod = mx.mod.Module.load(prefix, 1)
    with pytest.raises(mx.MXNetError, match=r"parameter\(s\) 'fc_weight' of the symbol have no value in the "
                                            r"parameters loaded by Module.load from .*net-0001.params") as info:
        mod.fit(it, num_epoch=1)
    assert isinstance(info.value, KeyError)
    mod = mx.mod.Module.load(prefix, 1)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(force_init=True, allow_missing=True, arg_params={"fc_bias": mx.nd.zeros((3,))})
    assert sorted(mod.get_params()[0]) == ["fc_bias", "fc_weight"]  # the documented way out works
