"""Block: registration, naming, collect_params, hooks, apply, cast, save/load in MXNet's format."""

from __future__ import annotations

import os

import numpy as np
import pytest
from gluon_layers import BatchNorm, Dense, mlp

import mxasync as mx
from mxasync import autograd, gluon

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


class Net(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = Dense(4, in_units=3)
            self.dense1 = Dense(2, in_units=4)
            self.scale = self.params.get("scale", shape=(1,), init=mx.init.One())

    def forward(self, x):
        return self.dense1(self.dense0(x)) * self.scale.data()


def test_auto_prefixes_and_collect_params():
    a, b = Net(), Net()
    na = int(a.prefix[3:-1])
    assert b.prefix == f"net{na + 1}_"
    assert a.dense0.prefix == f"{a.prefix}dense0_" and a.dense1.name == f"{a.prefix}dense1"
    names = list(a.collect_params().keys())
    assert names == [f"{a.prefix}{n}" for n in ("scale", "dense0_weight", "dense0_bias", "dense1_weight",
                                                "dense1_bias")]
    assert list(a.collect_params(".*weight").keys()) == [f"{a.prefix}dense0_weight", f"{a.prefix}dense1_weight"]
    assert list(a.params.keys()) == [f"{a.prefix}scale"]
    c = Net(prefix="model_")
    assert c.dense0.weight.name == "model_dense0_weight"


def test_parameter_sharing_through_params():
    a = Dense(3, in_units=2, prefix="shared_")
    b = Dense(3, in_units=2, prefix="shared_", params=a.collect_params())
    assert b.weight is a.weight and b.bias is a.bias
    a.initialize()
    x = mx.nd.ones((1, 2))
    np.testing.assert_allclose(a(x).asnumpy(), b(x).asnumpy())
    seq = gluon.nn.Sequential()
    seq.add(a, b)
    assert len(seq.collect_params()) == 2


def test_child_registration_and_type_guard():
    net = Net()
    assert list(net._children) == ["dense0", "dense1"]
    with pytest.raises(TypeError, match="Changing attribute type"):
        net.dense0 = 3
    with pytest.raises(AssertionError, match="Overriding Parameter"):
        net.scale = gluon.Parameter("other", shape=(1,))
    with pytest.raises(ValueError, match="HybridSequential"):
        gluon.nn.HybridSequential().add(Net())


def test_hooks_and_apply():
    net = Net()
    net.initialize()
    seen = []
    pre = net.register_forward_pre_hook(lambda blk, inp: seen.append(("pre", inp[0].shape)))
    post = net.register_forward_hook(lambda blk, inp, out: seen.append(("post", out.shape)))
    net(mx.nd.ones((5, 3)))
    assert seen == [("pre", (5, 3)), ("post", (5, 2))]
    pre.detach()
    post.detach()
    net(mx.nd.ones((5, 3)))
    assert len(seen) == 2
    visited = []
    net.apply(lambda b: visited.append(b.name))
    assert visited == [net.dense0.name, net.dense1.name, net.name]


def test_cast_and_summary(capsys):
    net = Net()
    net.initialize()
    net.cast("float64")
    assert net.dense0.weight.data().dtype == np.float64
    y = net(mx.nd.ones((2, 3), dtype="float64"))
    assert y.dtype == np.float64
    net.summary(mx.nd.ones((2, 3), dtype="float64"))
    out = capsys.readouterr().out
    assert "Dense-" in out and "Total params: 27" in out


def test_save_load_parameters_round_trip(tmp_path):
    net = mlp()
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(4, 5))
    y = net(x).asnumpy()
    fname = str(tmp_path / "net.params")
    net.save_parameters(fname)
    assert sorted(mx.nd.load(fname)) == ["0.bias", "0.weight", "1.beta", "1.gamma", "1.running_mean",
                                         "1.running_var", "2.bias", "2.weight"]
    other = mlp()
    other.load_parameters(fname, ctx=mx.cpu())
    np.testing.assert_allclose(other(x).asnumpy(), y, rtol=1e-6)
    small = gluon.nn.HybridSequential()
    with small.name_scope():
        small.add(Dense(6, activation="relu"))
    with pytest.raises(ValueError, match="not present"):
        small.load_parameters(fname)
    small.load_parameters(fname, ignore_extra=True)
    bigger = mlp()
    with bigger.name_scope():
        bigger.add(Dense(2))
    with pytest.raises(AssertionError, match="is missing"):
        bigger.load_parameters(fname)


def test_legacy_save_params_names(tmp_path):
    net = Net(prefix="legacy_")
    net.initialize()
    fname = str(tmp_path / "legacy.params")
    with pytest.warns(UserWarning):
        net.save_params(fname)
    assert "dense0_weight" in mx.nd.load(fname)
    other = Net(prefix="legacy_")
    other.load_parameters(fname)
    np.testing.assert_array_equal(other.dense0.weight.data().asnumpy(), net.dense0.weight.data().asnumpy())


def test_mxnet_saved_parameters_load():
    """mlp.params was written by MXNet 1.9.1's save_parameters (fixtures/make_fixtures.py)."""
    io = np.load(os.path.join(FIXTURES, "mlp_io.npz"))
    net = mlp()
    net.load_parameters(os.path.join(FIXTURES, "mlp.params"))
    x = mx.nd.array(io["x"])
    np.testing.assert_allclose(net(x).asnumpy(), io["y_pred"], rtol=1e-5, atol=1e-5)
    with autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), io["y_train"], rtol=1e-5, atol=1e-5)
    for name, p in net.collect_params().items():
        name = "hybridsequential0_" + name[len(net.prefix):]  # the recorded net's prefix
        np.testing.assert_allclose(p.data().asnumpy(), io[f"data:{name}"], rtol=1e-5, atol=1e-6)
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), io[f"grad:{name}"], rtol=1e-4, atol=1e-5)


def test_sequential_indexing_and_lambda():
    seq = gluon.nn.Sequential()
    with seq.name_scope():
        seq.add(gluon.nn.Lambda("relu"), gluon.nn.Lambda(lambda x: x * 3), BatchNorm(in_channels=2))
    assert len(seq) == 3 and isinstance(seq[1], gluon.nn.Lambda)
    head = seq[:2]
    assert isinstance(head, gluon.nn.Sequential) and len(head) == 2
    np.testing.assert_array_equal(head(mx.nd.array([-1.0, 2.0])).asnumpy(), [0, 6])
    assert "Lambda(relu)" in repr(seq)
    with pytest.raises(ValueError, match="Unrecognized"):
        gluon.nn.Lambda(3)


# printed by MXNet 1.9.1 for the same blocks and inputs (recorded 2026-12-02 with /work/venvs/mx191)
MXNET_SUMMARIES = '''\
--------------------------------------------------------------------------------
        Layer (type)                                Output Shape         Param #
================================================================================
               Input                                     (1, 64)               0
        Activation-1                    <Symbol dense0_relu_fwd>               0
        Activation-2                                     (1, 64)               0
             Dense-3                                     (1, 64)            4160
             Dense-4                                     (1, 10)             650
================================================================================
Parameters in forward computation graph, duplicate included
   Total params: 4810
   Trainable params: 4810
   Non-trainable params: 0
Shared params in forward computation graph: 0
Unique parameters in model: 4810
--------------------------------------------------------------------------------
--------------------------------------------------------------------------------
        Layer (type)                                Output Shape         Param #
================================================================================
               Input                                (2, 1, 6, 6)               0
            Conv2D-1                                (2, 4, 4, 4)              40
         BatchNorm-2                                (2, 4, 4, 4)              16
             Dense-3                                      (2, 3)             195
               Net-4                                      (2, 3)               0
================================================================================
Parameters in forward computation graph, duplicate included
   Total params: 251
   Trainable params: 243
   Non-trainable params: 8
Shared params in forward computation graph: 0
Unique parameters in model: 251
--------------------------------------------------------------------------------
'''


def test_summary_prints_what_mxnet_prints_and_refuses_a_hybridized_block(capsys):
    from mxasync.gluon import nn

    class ConvNet(nn.Block):
        def __init__(self):
            super().__init__(prefix="net_")
            self.conv = nn.Conv2D(4, 3)
            self.bn = nn.BatchNorm()
            self.fc = nn.Dense(3)

        def forward(self, x):
            return self.fc(self.bn(self.conv(x)))

    ConvNet.__name__ = "Net"
    with mx.name.NameManager():
        seq = nn.HybridSequential()
        seq.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    seq.initialize()
    seq.summary(mx.nd.zeros((1, 64)))
    conv = ConvNet()
    conv.initialize()
    conv.summary(mx.nd.zeros((2, 1, 6, 6)))
    assert capsys.readouterr().out == MXNET_SUMMARIES
    seq.hybridize()
    with pytest.raises(mx.MXNetError, match='"dense0_relu" must not be hybridized to print summary'):
        seq.summary(mx.nd.zeros((1, 64)))
