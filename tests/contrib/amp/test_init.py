"""``amp.init``: casts by the op lists on imperative calls (mx.nd, NDArray operators, mx.np), on graph
nodes (mx.sym, hybridized blocks), and nothing left behind by ``deinit``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib import amp

F16, F32 = np.float16, np.float32


def _fc(x, dtype="float32"):
    return mx.nd.FullyConnected(x, mx.nd.ones((4, 3), dtype=dtype), mx.nd.ones((4,), dtype=dtype), num_hidden=4)


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_ndarray_calls_follow_the_lists(target: str) -> None:
    amp.init(target)
    low = np.dtype(target).type
    assert amp.amp._amp_initialized
    x = mx.nd.ones((2, 3))
    y = _fc(x)
    assert y.dtype is low  # target-precision op: float32 inputs cast down
    assert mx.nd.softmax(y).dtype is F32  # float32 op: cast up
    assert (y + x[:, :1].broadcast_to((2, 4))).dtype is F32  # widest: one float32 input makes it float32
    assert (y + y).dtype is low
    assert mx.nd.Activation(y, act_type="softrelu").dtype is F32  # conditional float32
    assert mx.nd.Activation(y, act_type="relu").dtype is low
    assert mx.nd.FullyConnected(mx.nd.ones((2, 3), dtype="int32"), mx.nd.ones((4, 3), dtype="int32"),
                                no_bias=True, num_hidden=4).dtype is np.int32  # only AMP types are cast


def test_numpy_interface_is_covered() -> None:
    amp.init("float16")
    y = mx.npx.fully_connected(mx.np.ones((2, 3)), mx.np.ones((4, 3)), mx.np.ones((4,)), num_hidden=4)
    assert y.dtype == F16 and isinstance(y, mx.np.ndarray)


def test_bfloat16_batchnorm_keeps_fp32_params_when_made_a_target_op() -> None:
    amp.init("bfloat16", target_precision_ops=["BatchNorm", "FullyConnected", "Convolution"])
    x = mx.nd.ones((2, 3, 4))
    out = mx.nd.BatchNorm(x, mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,)))
    assert out.dtype is np.dtype("bfloat16").type  # data cast, gamma/beta/stats left in float32


def test_symbol_nodes_get_mxnets_casts() -> None:
    amp.init("float16")
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    out = mx.sym.softmax(fc + data, name="sm")
    nodes = json.loads(out.tojson(remove_amp_cast=False))["nodes"]
    ops = [n["op"] for n in nodes]
    assert ops.count("amp_cast") == 4  # data, weight, bias to float16; fc+data multicast; softmax to float32
    assert ops.count("amp_multicast") == 1
    fc_node = next(n for n in nodes if n["name"] == "fc")
    assert all(nodes[i[0]]["op"] == "amp_cast" and nodes[i[0]]["attrs"]["dtype"] == "float16"
               for i in fc_node["inputs"])
    ex = out.simple_bind(mx.cpu(), data=(2, 4))
    assert ex.forward()[0].dtype is F32


def test_hybridized_block_runs_in_the_target_dtype() -> None:
    amp.init("bfloat16")
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(8, activation="relu"), mx.gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    out = net(mx.nd.ones((2, 5)))
    assert out.dtype is np.dtype("bfloat16").type and out.shape == (2, 3)


def test_deinit_leaves_nothing_behind() -> None:
    amp.init("float16")
    amp.deinit()
    assert not amp.amp._amp_initialized
    assert _fc(mx.nd.ones((2, 3))).dtype is F32
    assert "amp_cast" not in mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2).tojson(remove_amp_cast=False)
    amp.init("bfloat16")  # a fresh init after deinit takes the new target
    assert _fc(mx.nd.ones((2, 3))).dtype is np.dtype("bfloat16").type


def test_second_init_is_ignored_as_in_mxnet() -> None:
    amp.init("float16")
    amp.init("bfloat16")
    assert _fc(mx.nd.ones((2, 3))).dtype is F16


def test_loss_outputs_get_the_loss_scale() -> None:
    amp.init("float16")
    x = mx.nd.array([[1.0, 2.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([0]))
    y.backward()
    p = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
    np.testing.assert_allclose(x.grad.asnumpy()[0], (p - [1, 0]) * 2.0 ** 16, rtol=1e-5)


def test_init_rejects_other_dtypes() -> None:
    with pytest.raises(AssertionError, match="float16 or bfloat16"):
        amp.init("float64")
    assert not amp.amp._amp_initialized


def test_inputs_an_op_writes_are_never_cast() -> None:
    amp.init("bfloat16")  # sgd_mom_update is a float32 op in the bfloat16 lists
    w = mx.nd.ones((3,), dtype="bfloat16")
    mom = mx.nd.zeros((3,), dtype="bfloat16")
    mx.nd.sgd_mom_update(w, mx.nd.ones((3,)), mom, lr=0.5, momentum=0.9, out=w)
    assert mom.asnumpy().astype(np.float32).tolist() == [-0.5] * 3  # the state itself was updated
