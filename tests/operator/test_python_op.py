"""MXNet's legacy Python operators (mx.operator.NumpyOp / NDArrayOp, deprecated there) run as Custom ops:
a softmax loss written with NumPy over a doubling written with NDArrays, checked against NumPy."""

import warnings

import numpy as np
import pytest

import mxasync as mx


class _SoftmaxLoss(mx.operator.NumpyOp):
    def __init__(self):
        super().__init__(False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]

    def forward(self, in_data, out_data):
        x, y = in_data[0], out_data[0]
        y[:] = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)

    def backward(self, out_grad, in_data, out_data, in_grad):
        label = in_data[1].astype("int32")
        in_grad[0][:] = out_data[0]
        in_grad[0][np.arange(label.shape[0]), label] -= 1.0


class _Twice(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 2


def test_numpy_and_ndarray_ops_forward_and_backward():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        net = _SoftmaxLoss()(data=_Twice()(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc"),
                                           name="tw"), name="softmax")
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]
    assert net.list_outputs() == ["softmax_output"]
    x, w, label = np.arange(8).reshape(2, 4) / 10, np.arange(12).reshape(3, 4) / 10, np.array([0, 2])
    ex = net.simple_bind(mx.cpu(), data=(2, 4))
    for name, value in (("data", x), ("fc_weight", w), ("fc_bias", np.zeros(3)), ("softmax_label", label)):
        ex.arg_dict[name][:] = mx.nd.array(value)
    ex.forward(is_train=True)
    ex.backward()
    z = 2 * (x @ w.T)
    prob = np.exp(z - z.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), prob, rtol=1e-5)
    dz = prob.copy()
    dz[np.arange(2), label] -= 1
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), (2 * dz).T @ x, rtol=1e-4, atol=1e-6)


def test_they_warn_as_deprecated_like_mxnets():
    with pytest.warns(UserWarning, match="NDArrayOp has been deprecated"):
        _Twice()
