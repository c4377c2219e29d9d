"""HybridBlock: op hooks, ``inline_limit``, and None or Python scalars among the inputs.

Hook names and the imperative results were printed by MXNet 1.9.1 for the same blocks; where
MXNet 1.9.1 refuses (a scalar input to a hybridized block) mxasync traces one graph per value.
"""

import warnings

import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon import nn


def _dense_relu():
    net = nn.HybridSequential(prefix="dense_")
    with net.name_scope():
        net.add(nn.Dense(2))
        net.add(nn.Activation("relu"))
    net.initialize()
    return net


def _hooked(net, monitor_all=False, record=False):
    seen = []
    net.register_op_hook(lambda node, op, arr: seen.append((node.decode(), op.decode(), arr.shape)), monitor_all)
    x = mx.nd.ones((2, 3, 4))
    if record:
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward()
    else:
        net(x)
    return seen


def test_op_hook_sees_each_op_output_with_mxnet_names():
    net = _dense_relu()
    assert _hooked(net) == []  # not hybridized: no graph, no hook (MXNet's)
    net.hybridize()
    assert _hooked(net) == [("dense_dense0_fwd_output", "FullyConnected", (2, 2)),
                            ("dense_relu0_fwd_output", "Activation", (2, 2))]
    assert [n for n, _, _ in _hooked(net, monitor_all=True)] == [
        "dense_dense0_fwd_data", "dense_dense0_fwd_weight", "dense_dense0_fwd_bias", "dense_dense0_fwd_output",
        "dense_relu0_fwd_data", "dense_relu0_fwd_output"]  # MXNet says relu0_fwd_input0 (see docs/gluon.md)
    pool = nn.HybridSequential(prefix="pool_")
    with pool.name_scope():
        pool.add(nn.AvgPool1D())
    pool.initialize()
    pool.hybridize()
    assert _hooked(pool, monitor_all=True) == [("pool_pool0_fwd_data", "Pooling", (2, 3, 4)),
                                               ("pool_pool0_fwd_output", "Pooling", (2, 3, 2))]


def test_op_hook_in_backward_and_through_a_plain_block():
    net = _dense_relu()
    net.hybridize(inline_limit=0)  # not inlined: the recorded call runs the graph's backward
    assert [(n, o) for n, o, _ in _hooked(net, record=True)] == [
        ("dense_dense0_fwd_output", "FullyConnected"), ("dense_relu0_fwd_output", "Activation"),
        ("dense_relu0_fwd_backward_0", "_backward_Activation"),
        ("dense_dense0_fwd_backward_0", "_backward_FullyConnected"),
        ("dense_dense0_fwd_backward_1", "_backward_FullyConnected"),
        ("dense_dense0_fwd_backward_2", "_backward_FullyConnected")]
    net.hybridize()  # two ops, inline_limit 2: recorded op by op, so backward runs no graph (MXNet's)
    assert [n for n, _, _ in _hooked(net, record=True)] == ["dense_dense0_fwd_output", "dense_relu0_fwd_output"]
    outer = nn.Sequential()
    outer.add(_dense_relu())
    outer.hybridize()
    assert len(_hooked(outer)) == 2
    net.hybridize(static_alloc=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _hooked(net)
    assert any("register_op_hook is experimental" in str(x.message) for x in w)


def test_inline_limit_decides_whether_a_recorded_call_is_one_node():
    net = nn.Dense(2, in_units=3)
    net.initialize()
    grads = []
    for kw, op in (({}, "FullyConnected"), ({"inline_limit": 0}, "_CachedOp"),
                   ({"inline_limit": 5, "static_alloc": True}, "_CachedOp")):
        net.hybridize(**kw)
        x = mx.nd.array(np.arange(6).reshape(2, 3))
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        assert y._ag.node.prop.op_name == op
        y.backward()
        grads.append(x.grad.asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-6)
    net.hybridize(True, None, True, False, False, 2, 4, 4)  # MXNet's positional order is accepted


class _Opt(mx.gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.traces = 0

    def hybrid_forward(self, F, x, a=None, s=2.0):
        self.traces += 1
        y = x * s
        return y + a if a is not None else y


@pytest.mark.parametrize("hybridize", [False, True])
def test_none_and_scalar_inputs(hybridize):
    net = _Opt()
    net.initialize()
    net.hybridize(hybridize)
    x, one = mx.nd.ones((2,)), mx.nd.ones((2,))
    assert net(x).asnumpy().tolist() == [2.0, 2.0]
    assert net(x, None).asnumpy().tolist() == [2.0, 2.0]  # a trailing None is the default (MXNet's)
    assert net(x, None, 3.0).asnumpy().tolist() == [3.0, 3.0]
    assert net(x, None, 0.5).asnumpy().tolist() == [0.5, 0.5]
    assert net(x, None, 3.0).asnumpy().tolist() == [3.0, 3.0]
    assert net(x, one, 3).asnumpy().tolist() == [4.0, 4.0]
    if hybridize:
        traces = net.traces
        assert net(x, None, 0.5).asnumpy().tolist() == [0.5, 0.5]  # each value's graph is kept
        assert net(x, one, 3).asnumpy().tolist() == [4.0, 4.0]
        assert net.traces == traces
        with pytest.raises(ValueError, match="argument structure"):
            net(x, one, 3.0)  # None where the graph of 3.0 was traced with an array: MXNet's refusal


def test_data_names_count_the_arrays_only():
    net = _Opt()
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2,)), None, 3.0)
    assert net._cached_graph[1].list_inputs() == ["data"]
    net2 = _Opt()
    net2.initialize()
    net2.hybridize()
    net2(mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert net2._cached_graph[1].list_inputs() == ["data0", "data1"]
