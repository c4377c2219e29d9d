"""Mirrors MXNet's test_infer_shape.py and test_infer_type.py."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync import MXNetError
from mxasync import symbol as sym


def mlp2():
    out = sym.FullyConnected(sym.Variable("data"), name="fc1", num_hidden=1000)
    out = sym.Activation(out, act_type="relu")
    return sym.FullyConnected(out, name="fc2", num_hidden=10)


def test_mlp2_infer_shape():
    out = mlp2()
    arg_shapes, out_shapes, aux_shapes = out.infer_shape(data=(100, 100))
    assert dict(zip(out.list_arguments(), arg_shapes, strict=True)) == {
        "data": (100, 100), "fc1_weight": (1000, 100), "fc1_bias": (1000,),
        "fc2_weight": (10, 1000), "fc2_bias": (10,)}
    assert out_shapes == [(100, 10)] and aux_shapes == []
    assert out.infer_shape((100, 100)) == (arg_shapes, out_shapes, aux_shapes)


def test_mlp2_infer_error():
    out = mlp2()
    with pytest.raises(MXNetError) as info:
        out.infer_shape(data=(100, 100), fc1_weight=(1000, 99))
    msg = str(info.value)
    assert "fc1" in msg and "FullyConnected" in msg and "(1000, 99)" in msg and "(1000, 100)" in msg


def test_incomplete_and_partial():
    out = mlp2()
    assert out.infer_shape() == (None, None, None)
    args, outs, aux = out.infer_shape_partial(fc1_weight=(1000, 100))
    assert args[0] == () and args[1] == (1000, 100) and outs == [()]
    args, outs, _ = out.infer_shape_partial(data=(5, 100))
    assert outs == [(5, 10)]


def test_backward_infer():
    # the weight of fc comes from data; elemwise_add passes it back to both its inputs
    w, shift, data = sym.Variable("weight"), sym.Variable("wshift"), sym.Variable("data")
    net = sym.FullyConnected(data=data, weight=sym.elemwise_add(w, shift), num_hidden=11, no_bias=True)
    arg_shapes, out_shapes, _ = net.infer_shape(data=(7, 100))
    shapes = dict(zip(net.list_arguments(), arg_shapes, strict=True))
    assert shapes["weight"] == (11, 100) and shapes["wshift"] == (11, 100)
    # broadcasting ops cannot be inverted: the shape stays unknown, as in MXNet
    net = sym.FullyConnected(data=data, weight=sym.broadcast_add(w, shift), num_hidden=11, no_bias=True)
    assert net.infer_shape(data=(7, 100)) == (None, None, None)


def test_variable_shape_hint_and_conv():
    data = sym.Variable("data", shape=(2, 3, 10, 10))
    net = sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    net = sym.BatchNorm(net, name="bn")
    args, outs, aux = net.infer_shape()
    assert args == [(2, 3, 10, 10), (4, 3, 3, 3), (4,), (4,), (4,)]
    assert outs == [(2, 4, 10, 10)] and aux == [(4,), (4,)]


def test_inconsistent_provided_shape_names_entry():
    a = sym.Variable("a")
    with pytest.raises(MXNetError, match="elemwise_add"):
        sym.elemwise_add(a, sym.Variable("b"), name="add").infer_shape(a=(2, 3), b=(3, 3))


def test_infer_type():
    out = mlp2()
    args, outs, aux = out.infer_type(data=np.float32)
    assert args == [np.float32] * 5 and outs == [np.float32]
    assert out.infer_type() == (None, None, None)
    args, _, _ = sym.FullyConnected(sym.Variable("x", dtype="float64"), num_hidden=2).infer_type()
    assert args == [np.float64] * 3
    bn = sym.BatchNorm(sym.Variable("x"))
    args, outs, aux = bn.infer_type(x="float16")
    assert args == [np.float16, np.float32, np.float32] and aux == [np.float32, np.float32]
