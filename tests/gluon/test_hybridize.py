"""hybridize(): the traced graph runs on the Executor and matches the imperative run, values and gradients."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from gluon_layers import Dense, Dropout, mlp

import mxasync as mx
from mxasync import autograd, gluon

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
MXREF = os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python")  # README: Test


def _run(net, x, hybrid):
    net.hybridize(hybrid)
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    grads = {n[len(net.prefix):]: p.grad().asnumpy().copy() for n, p in net.collect_params().items()
             if p.grad_req != "null"}
    return y.asnumpy(), x.grad.asnumpy(), grads


@pytest.mark.parametrize("batchnorm", [False, True])
def test_hybridized_matches_imperative(batchnorm):
    net = mlp(batchnorm=batchnorm)
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(-1, 1, shape=(4, 5))
    net(x)  # deferred initialization
    state = {n: p.data().copy() for n, p in net.collect_params().items()}
    y0, gx0, g0 = _run(net, x, False)
    for n, p in net.collect_params().items():  # BatchNorm's running stats moved: start again from the same point
        p.set_data(state[n])
    y1, gx1, g1 = _run(net, x, True)
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx1, gx0, rtol=1e-5, atol=1e-6)
    for k in g0:
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-5, atol=1e-6, err_msg=k)
    if batchnorm:  # the aux states were updated in place by the cached graph too
        rm = [p for n, p in net.collect_params().items() if n.endswith("running_mean")][0]
        assert np.abs(rm.data().asnumpy()).sum() > 0


def test_cached_graph_is_one_tape_node_and_mixes_with_imperative_ops():
    net = mlp(batchnorm=False)
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((2, 5))
    with autograd.record():
        y = net(x)
        assert y._ag.node.prop.op_name == "_CachedOp"
        w = net[0].weight.data()
        loss = y.sum() + (w * w).sum()  # the weight is used inside the graph and outside it
    loss.backward()
    net.hybridize(False)
    with autograd.record():
        loss2 = net(x).sum() + (w * w).sum()
    g_hybrid = net[0].weight.grad().asnumpy().copy()
    loss2.backward()
    np.testing.assert_allclose(g_hybrid, net[0].weight.grad().asnumpy(), rtol=1e-5, atol=1e-6)


def test_two_calls_before_backward_keep_their_own_state():
    """A siamese use: the second call may not overwrite the first call's activations."""
    net = mlp(batchnorm=False)
    net.initialize()
    a, b = mx.nd.random.uniform(shape=(3, 5)), mx.nd.random.uniform(shape=(3, 5))
    grads = []
    for hybrid in (False, True):
        net.hybridize(hybrid)
        with autograd.record():
            loss = (net(a) * net(b)).sum()
        loss.backward()
        grads.append(net[0].weight.grad().asnumpy().copy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_new_input_shapes_and_deferred_init():
    mx.random.seed(3)  # weights with live ReLUs: with some draws every unit is dead and both calls give the bias
    net = mlp(batchnorm=False)
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    assert net[0].weight.shape == (6, 0)
    y = net(mx.nd.ones((2, 7)))
    assert net[0].weight.shape == (6, 7) and y.shape == (2, 3)
    assert net(mx.nd.ones((5, 7))).shape == (5, 3)
    first = net(mx.nd.ones((2, 7)))
    second = net(mx.nd.full((2, 7), 2.0))
    assert not np.allclose(first.asnumpy(), second.asnumpy())  # outputs are not overwritten by later calls


def test_reinitialized_parameters_are_rebound():
    net = mlp(batchnorm=False)
    net.initialize(mx.init.Zero())
    net.hybridize()
    x = mx.nd.ones((1, 5))
    assert net(x).asnumpy().sum() == 0
    net.initialize(mx.init.One(), force_reinit=True)
    assert net(x).asnumpy().sum() != 0


def test_dropout_follows_training_mode():
    drop = Dropout(0.5)
    drop.hybridize()
    x = mx.nd.ones((100,))
    np.testing.assert_array_equal(drop(x).asnumpy(), np.ones(100))
    with autograd.record():
        y = drop(x)
    assert set(np.unique(y.asnumpy())) <= {0.0, 2.0} and (y.asnumpy() == 0).any()


def test_symbol_input_composes_a_graph():
    net = mlp(batchnorm=False)
    out = net(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments()[0] == "data" and f"{net.prefix}dense0_weight" in out.list_arguments()
    with pytest.raises(ValueError, match="mixed"):
        net.hybridize()
        net.initialize()
        net(mx.nd.ones((1, 5)), mx.sym.var("b"))


def test_export_then_import(tmp_path):
    net = mlp()
    net.initialize(mx.init.Xavier())
    with pytest.raises(RuntimeError, match="hybridize"):
        net.export(str(tmp_path / "none"))
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 5))
    y = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "model"), epoch=7)
    assert params_file.endswith("model-0007.params")
    keys = set(mx.nd.load(params_file))
    assert f"arg:{net.prefix}dense0_weight" in keys and f"aux:{net.prefix}batchnorm0_running_var" in keys
    block = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(block(x).asnumpy(), y, rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        z = block(x)
    z.backward()
    assert x.grad.shape == x.shape
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "model"), 7)
    assert set(args) | set(aux) == {k[4:] for k in keys}


def test_symbol_block_from_symbols_shares_params():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    block = gluon.SymbolBlock(mx.sym.relu(fc), data)
    block.initialize()
    assert block(mx.nd.ones((2, 3))).shape == (2, 4)
    assert sorted(block.collect_params().keys()) == ["fc_bias", "fc_weight"]
    inner = gluon.SymbolBlock(fc, data, params=block.collect_params())
    assert inner.collect_params()["fc_weight"] is block.collect_params()["fc_weight"]


def test_mxnet_export_imports():
    """mlp-symbol.json / mlp-0000.params were written by MXNet 1.9.1's export."""
    io = np.load(os.path.join(FIXTURES, "mlp_io.npz"))
    block = gluon.SymbolBlock.imports(os.path.join(FIXTURES, "mlp-symbol.json"), ["data"],
                                      os.path.join(FIXTURES, "mlp-0000.params"))
    np.testing.assert_allclose(block(mx.nd.array(io["x"])).asnumpy(), io["y_pred"], rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not os.path.exists(MXREF), reason=f"no MXNet 1.9.1 at {MXREF} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_our_export_loads_in_mxnet(tmp_path):
    net = mlp()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = np.random.RandomState(0).uniform(size=(3, 5)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.export(str(tmp_path / "ours"))
    np.save(tmp_path / "x.npy", x)
    script = ("import numpy as np, mxnet as mx, sys; d = sys.argv[1]; "
              "b = mx.gluon.SymbolBlock.imports(d + '/ours-symbol.json', ['data'], d + '/ours-0000.params'); "
              "np.save(d + '/y.npy', b(mx.nd.array(np.load(d + '/x.npy'))).asnumpy())")
    subprocess.run([MXREF, "-c", script, str(tmp_path)], check=True, capture_output=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), y, rtol=1e-5, atol=1e-6)


def test_hybrid_lambda_and_unused_input_warning():
    lam = gluon.nn.HybridLambda(lambda F, x, y: F.relu(x))
    lam.hybridize()
    with pytest.warns(UserWarning, match="not used"):
        lam(mx.nd.array([-1.0, 1.0]), mx.nd.ones((2,)))


def test_dense_without_bias_in_sequential_graph_names():
    net = gluon.nn.HybridSequential(prefix="m_")
    with net.name_scope():
        net.add(Dense(2, use_bias=False, in_units=3))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 3)))
    assert net._cached_graph[1].list_arguments() == ["data", "m_dense0_weight"]


def test_shared_parameters_across_hybridized_blocks():
    """Two hybridized blocks share weights (and one weight is also used imperatively): every
    gradient term counts, whichever executor writes the gradient buffer in place."""
    a = mlp(batchnorm=False)
    a.initialize(mx.init.Xavier())
    b = gluon.nn.HybridSequential(prefix=a.prefix, params=a.collect_params())
    with b.name_scope():
        b.add(Dense(6, activation="relu"), Dense(3))
    x = mx.nd.random.uniform(shape=(2, 5))
    a(x)  # deferred initialization
    grads = []
    for hybrid in (False, True):
        a.hybridize(hybrid)
        b.hybridize(hybrid)
        with autograd.record():
            w = a[0].weight.data()
            loss = (a(x) * b(x * 2)).sum() + (w * w).sum()
        loss.backward()
        grads.append({n: p.grad().asnumpy().copy() for n, p in a.collect_params().items()})
    assert set(grads[0]) == set(b.collect_params().keys())
    for n in grads[0]:
        np.testing.assert_allclose(grads[1][n], grads[0][n], rtol=1e-5, atol=1e-6, err_msg=n)


def test_grad_req_add_accumulates_through_the_graph():
    net = mlp(batchnorm=False)
    net.initialize()
    net.collect_params().setattr("grad_req", "add")
    x = mx.nd.ones((2, 5))
    net(x)
    out = []
    for hybrid in (False, True):
        net.hybridize(hybrid)
        net.collect_params().zero_grad()
        for _ in range(2):
            with autograd.record():
                loss = net(x).sum()
            loss.backward()
        out.append(net[0].weight.grad().asnumpy().copy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    np.testing.assert_allclose(net[0].weight.grad().asnumpy(), out[0] * 1.5, rtol=1e-5, atol=1e-6)


def test_threads_share_a_hybridized_block():
    import threading

    net = mlp(batchnorm=False)
    net.initialize()
    net.hybridize()
    xs = [mx.nd.full((3, 5), float(i)) for i in range(8)]
    expected = [net(x).asnumpy() for x in xs]
    got = [None] * len(xs)

    def run(i):
        for _ in range(5):
            got[i] = net(xs[i]).asnumpy()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)


class _Nested(mx.gluon.nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = mx.gluon.nn.Dense(2)  # deferred: the first call infers in_units

    def hybrid_forward(self, F, x):
        y = self.dense(x)
        return [y, (y * 2, [y + 1])]


def test_a_block_never_hybridized_returns_its_lists_and_tuples_as_built():
    """MXNet's imperative HybridBlock hands back what hybrid_forward returned (nested lists and tuples);
    hybridized, the same values come as the graph's nested lists."""
    net = _Nested()
    net.initialize()
    x = mx.nd.ones((1, 3))
    out = net(x)
    assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
    y = out[0].asnumpy()
    np.testing.assert_allclose(out[1][0].asnumpy(), 2 * y)
    np.testing.assert_allclose(out[1][1][0].asnumpy(), y + 1)
    with mx.autograd.record():
        loss = net(x)[1][1][0].sum()
    loss.backward()
    np.testing.assert_allclose(net.dense.weight.grad().asnumpy(), np.ones((2, 3)))
    net.hybridize()
    again = net(x)
    assert isinstance(again[1], list) and isinstance(again[1][1], list)
    np.testing.assert_allclose(again[1][1][0].asnumpy(), y + 1, rtol=1e-6)
