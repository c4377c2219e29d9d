"""Integer-dtype arithmetic as MXNet 1.9.1 computes it (values recorded from it): division truncates
toward zero, scalars are cast to the array's dtype first, float functions of integers are cast back."""

import numpy as np

import mxasync as mx


def test_uint8_ops_match_mxnet():
    a = mx.nd.array([7, 200, 3], dtype="uint8")
    b = mx.nd.array([2, 3, 5], dtype="uint8")
    assert (a / b).asnumpy().tolist() == [3, 66, 0]
    assert (a % b).asnumpy().tolist() == [1, 2, 3]
    assert (a / 2).asnumpy().tolist() == [3, 100, 1]
    assert (a * 3.7).asnumpy().tolist() == [21, 88, 9]
    assert (a + b).asnumpy().tolist() == [9, 203, 8] and (a - b).asnumpy().tolist() == [5, 197, 254]
    assert (a / b).dtype == np.uint8


def test_int32_ops_match_mxnet():
    c = mx.nd.array([-7, 7], dtype="int32")
    d = mx.nd.array([2, -2], dtype="int32")
    assert (c / d).asnumpy().tolist() == [-3, -3]
    assert mx.nd.broadcast_div(c, mx.nd.array([2], dtype="int32")).asnumpy().tolist() == [-3, 3]
    assert (c % d).asnumpy().tolist() == [1, -1]
    assert (c / 2.5).asnumpy().tolist() == [-3, 3]
    assert (c ** 2).asnumpy().tolist() == [49, 49]
    assert mx.nd.sqrt(c).asnumpy().tolist() == [np.iinfo(np.int32).min, 2]
