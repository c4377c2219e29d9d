"""Whole networks through the executor against central finite differences, in float64."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import symbol as sym


def mlp():
    h = sym.FullyConnected(sym.Variable("data"), num_hidden=8, name="fc1")
    h = sym.Activation(h, act_type="tanh", name="t1")
    h = sym.FullyConnected(h, num_hidden=6, name="fc2")
    h = sym.Activation(h, act_type="sigmoid", name="s2")
    return sym.FullyConnected(h, num_hidden=3, name="fc3") + sym.FullyConnected(h, num_hidden=3, name="skip")


def lenet():
    h = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=3, name="conv1")
    h = sym.BatchNorm(h, fix_gamma=False, name="bn1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = sym.Convolution(h, kernel=(2, 2), num_filter=4, pad=(1, 1), name="conv2")
    h = sym.Activation(h, act_type="tanh", name="tanh2")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool2")
    h = sym.Flatten(h, name="flatten")
    return sym.FullyConnected(h, num_hidden=5, name="fc1")


def check_numeric_gradient(net, shapes, seed, samples=6, eps=1e-6, rtol=1e-4, atol=1e-7):
    rng = np.random.default_rng(seed)
    exe = net.simple_bind(mx.cpu(), type_dict={n: np.float64 for n in net.list_arguments()}, **shapes)
    values = {n: rng.uniform(-1, 1, a.shape) for n, a in exe.arg_dict.items()}
    for n, v in values.items():
        exe.arg_dict[n][:] = v
    head = rng.uniform(-1, 1, exe.outputs[0].shape)

    def loss() -> float:
        exe.forward(is_train=True)
        return float((exe.outputs[0].asnumpy() * head).sum())

    loss()
    exe.backward(mx.nd.array(head, dtype=np.float64))
    for name, arr in exe.arg_dict.items():
        analytic = exe.grad_dict[name].asnumpy()
        flat = values[name].reshape(-1)
        for i in rng.choice(flat.size, size=min(samples, flat.size), replace=False):
            x = flat.copy()
            x[i] += eps
            arr[:] = x.reshape(arr.shape)
            up = loss()
            x[i] -= 2 * eps
            arr[:] = x.reshape(arr.shape)
            down = loss()
            arr[:] = values[name]
            numeric = (up - down) / (2 * eps)
            np.testing.assert_allclose(analytic.reshape(-1)[i], numeric, rtol=rtol, atol=atol,
                                       err_msg=f"d loss / d {name}[{i}]")


def test_mlp_gradient():
    check_numeric_gradient(mlp(), {"data": (4, 7)}, seed=1)


@pytest.mark.parametrize("seed", [2, 3])
def test_lenet_gradient(seed):
    check_numeric_gradient(lenet(), {"data": (3, 2, 9, 9)}, seed=seed)


def test_memory_plan_halves_training_memory():
    exe = lenet().simple_bind(mx.cpu(), data=(16, 2, 28, 28))
    assert exe.planned_bytes <= exe.unplanned_bytes / 2
    exe = lenet().simple_bind(mx.cpu(), data=(16, 2, 28, 28), grad_req="null")
    assert exe.planned_bytes <= exe.unplanned_bytes / 2
