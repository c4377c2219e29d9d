"""Mirrors MXNet's test_executor.py (bind, gradients, reshape) and test_zero_prop; executor behaviour."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

import mxasync as mx
from mxasync import MXNetError
from mxasync import symbol as sym
from mxasync.runtime.engine import Engine

RNG = np.random.default_rng(7)


def reldiff(a, b):
    diff = np.sum(np.abs(a - b))
    norm = np.sum(np.abs(a)) + np.sum(np.abs(b))
    return 0 if diff == 0 else diff / norm


BINARY = [
    (lambda a, b: a + b, lambda g, a, b: (g, g), None),
    (lambda a, b: a - b, lambda g, a, b: (g, -g), None),
    (lambda a, b: a * b, lambda g, a, b: (g * b, g * a), None),
    (lambda a, b: a / b, lambda g, a, b: (g / b, -g * a / (b * b)), None),
    (np.maximum, lambda g, a, b: (g * (a >= b), g * (a < b)), sym.maximum),
    (np.minimum, lambda g, a, b: (g * (a <= b), g * (a > b)), sym.minimum),
]


@pytest.mark.parametrize("uf,gf,sf", BINARY)
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_bind(uf, gf, sf, dim):
    shape = tuple(RNG.integers(1, 8, size=dim))
    lhs, rhs = sym.Variable("lhs"), sym.Variable("rhs")
    ret = sf(lhs, rhs) if sf is not None else uf(lhs, rhs)
    assert ret.list_arguments() == ["lhs", "rhs"]
    lhs_arr = mx.nd.array(RNG.uniform(-1, 1, shape))
    rhs_arr = mx.nd.array(RNG.uniform(0.5, 1.5, shape))
    lhs_grad, rhs_grad = mx.nd.empty(shape), mx.nd.empty(shape)
    exe = ret.bind(mx.cpu(), args=[lhs_arr, rhs_arr], args_grad=[lhs_grad, rhs_grad])
    exe3 = ret.bind(mx.cpu(), args=[lhs_arr, rhs_arr])
    exe4 = ret.bind(mx.cpu(), args={"rhs": rhs_arr, "lhs": lhs_arr}, args_grad={"lhs": lhs_grad, "rhs": rhs_grad})
    for e in (exe, exe3, exe4):
        e.forward()
    out1 = uf(lhs_arr.asnumpy(), rhs_arr.asnumpy())
    for e in (exe, exe3, exe4):
        assert reldiff(out1, e.outputs[0].asnumpy()) < 1e-6
    out_grad = mx.nd.array(np.ones(shape))
    lg, rg = gf(out_grad.asnumpy(), lhs_arr.asnumpy(), rhs_arr.asnumpy())
    exe.backward([out_grad])
    assert reldiff(lhs_grad.asnumpy(), lg) < 1e-6
    assert reldiff(rhs_grad.asnumpy(), rg) < 1e-6


def test_dot_and_scalar_ops():
    a, b = sym.Variable("a"), sym.Variable("b")
    net = sym.dot(a, b) * 2 + 1
    exe = net.simple_bind(mx.cpu(), a=(3, 4), b=(4, 5))
    av, bv = RNG.uniform(size=(3, 4)), RNG.uniform(size=(4, 5))
    out = exe.forward(is_train=True, a=av, b=bv)[0].asnumpy()
    np.testing.assert_allclose(out, 2 * av @ bv + 1, rtol=1e-5)
    g = RNG.uniform(size=(3, 5))
    exe.backward(mx.nd.array(g))
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), 2 * g @ bv.T, rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), 2 * av.T @ g, rtol=1e-5)


def test_shared_input_sums_gradients():
    x = sym.Variable("x")
    net = x * x + sym.sin(x)
    exe = net.simple_bind(mx.cpu(), x=(4,))
    xv = RNG.uniform(size=4)
    exe.forward(is_train=True, x=xv)
    exe.backward(mx.nd.ones((4,)))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 2 * xv + np.cos(xv), rtol=1e-5)


def test_grad_req_add_and_null():
    x, w = sym.Variable("x"), sym.Variable("w")
    net = x * w
    exe = net.simple_bind(mx.cpu(), grad_req={"x": "add", "w": "null"}, x=(3,), w=(3,))
    assert "w" not in exe.grad_dict
    exe.grad_dict["x"][:] = 1
    for _ in range(2):
        exe.forward(is_train=True, x=np.ones(3), w=np.full(3, 2.0))
        exe.backward(mx.nd.ones((3,)))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 5.0)


def test_zero_prop():
    data = sym.Variable("data")
    for _ in range(10):
        data = data * data

    def total(s, **kw):
        exe = s.simple_bind(mx.cpu(), data=(10, 3, 256, 256), **kw)
        return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))

    big = total(data)
    small1 = total(data, grad_req="null")
    small2 = total(sym.stop_gradient(data))
    assert big > small2
    assert small1 == small2


def test_blockgrad_prunes_backward_and_zeroes_grad():
    x = sym.Variable("x")
    net = sym.BlockGrad(x * 3) + x
    exe = net.simple_bind(mx.cpu(), x=(2,))
    exe.forward(is_train=True, x=np.ones(2))
    exe.backward(mx.nd.ones((2,)))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 1.0)
    assert not any(op.kind == "backward" and exe._graph.nodes[op.nid].op.name == "_mul_scalar"
                   for op in exe._bwd_ops)


def test_loss_head_needs_no_head_gradient():
    data, label = sym.Variable("data"), sym.Variable("label")
    net = sym.LinearRegressionOutput(sym.FullyConnected(data, num_hidden=1, name="fc"), label, name="lro")
    exe = net.simple_bind(mx.cpu(), data=(4, 3), label=(4, 1))
    xv, yv = RNG.uniform(size=(4, 3)), RNG.uniform(size=(4, 1))
    exe.copy_params_from({"fc_weight": np.ones((1, 3)), "fc_bias": np.zeros(1)})
    exe.forward(is_train=True, data=xv, label=yv)
    exe.backward()
    pred = xv.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), (pred - yv).sum(0), rtol=1e-5)


def test_reshape():
    x = sym.Variable("x")
    y = sym.FullyConnected(x, num_hidden=4)
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    new_exe = exe.reshape(x=(3, 4))
    new_exe.forward(is_train=False)
    assert np.all(new_exe.outputs[0].asnumpy() == 4)  # the sub executor runs
    assert np.all(exe.outputs[0].asnumpy()[:3] == 4)  # and shares memory with the base one
    exe.forward(is_train=False)
    assert np.all(new_exe.outputs[0].asnumpy() == 4)
    new_exe = exe.reshape(x=(6, 4), allow_up_sizing=True)
    new_exe.arg_arrays[0][:] = 0  # data is not shared when it grows
    assert np.all(exe.arg_arrays[0].asnumpy() == 1)
    assert np.all(new_exe.arg_arrays[1].asnumpy() == 1)  # weights are
    with pytest.raises(MXNetError, match="allow_up_sizing"):
        exe.reshape(x=(7, 4))


def test_batchnorm_aux_updated_only_when_training():
    net = sym.BatchNorm(sym.Variable("data"), name="bn", fix_gamma=False)
    exe = net.simple_bind(mx.cpu(), data=(8, 3))
    exe.arg_dict["bn_gamma"][:] = 1
    exe.aux_dict["bn_moving_var"][:] = 1
    xv = RNG.normal(2.0, 1.0, size=(8, 3))
    exe.forward(is_train=False, data=xv)
    assert np.all(exe.aux_dict["bn_moving_mean"].asnumpy() == 0)
    exe.forward(is_train=True, data=xv)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), 0.1 * xv.mean(0), rtol=1e-4)


def test_dicts_monitor_and_debug_str():
    net = sym.Activation(sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc"), act_type="relu",
                         name="relu")
    exe = net.simple_bind(mx.cpu(), data=(2, 5))
    assert list(exe.arg_dict) == ["data", "fc_weight", "fc_bias"]
    assert list(exe.output_dict) == ["relu_output"] and exe.aux_dict == {}
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.copy())))
    exe.forward(is_train=False, data=np.ones((2, 5)))
    assert [n for n, _ in seen] == ["fc_output", "relu_output"]
    assert exe.debug_str().rstrip().endswith("MB allocated")
    with pytest.raises(MXNetError, match="unknown argument"):
        exe.forward(nothere=np.ones(2))
    with pytest.raises(MXNetError, match="not an argument"):
        exe.copy_params_from({"nothere": np.ones(2)})


def test_bulk_size_does_not_change_results():
    net = mx_mlp()
    eng = Engine.get()
    results = []
    for size in (1, 3, 15):
        prev = eng.set_bulk_size(size)
        try:
            exe = net.simple_bind(mx.cpu(), data=(4, 6))
            for _k, v in exe.arg_dict.items():
                v[:] = np.linspace(-1, 1, v.size).reshape(v.shape)
            exe.forward(is_train=True)
            exe.backward(mx.nd.ones((4, 3)))
            results.append([g.asnumpy() for g in exe.grad_arrays])
        finally:
            eng.set_bulk_size(prev)
    for r in results[1:]:
        for a, b in zip(results[0], r, strict=True):
            np.testing.assert_array_equal(a, b)


def mx_mlp():
    h = sym.Activation(sym.FullyConnected(sym.Variable("data"), num_hidden=5, name="fc1"), act_type="tanh")
    return sym.FullyConnected(h, num_hidden=3, name="fc2")


def test_outputs_are_awaitable():
    exe = mx_mlp().simple_bind(mx.cpu(), data=(2, 6), grad_req="null")

    async def main():
        outs = await exe.forward_async(is_train=False, data=np.ones((2, 6)))
        out = await exe.outputs[0]
        return outs[0].shape, (await out.asnumpy_async()).shape

    assert asyncio.run(main()) == ((2, 3), (2, 3))


def test_bind_errors():
    net = mx_mlp()
    with pytest.raises(MXNetError, match="cannot infer"):
        net.simple_bind(mx.cpu())
    with pytest.raises(MXNetError, match="misses"):
        net.bind(mx.cpu(), args={"data": mx.nd.ones((2, 6))})
    dup = sym.Variable("x") + sym.Variable("x")
    with pytest.raises(MXNetError, match="several inputs"):
        dup.simple_bind(mx.cpu(), x=(2,))
