"""float32 exp is correctly rounded, as MXNet's CPU kernel (C's expf) gives it: NumPy's float32 exp can be one
ulp off (exp(1) = 2.718282 there, 2.7182817 in MXNet 1.9.1; MXNet's test_autograd.test_gradient checks it)."""

import numpy as np

import mxasync as mx


def test_float32_exp_is_correctly_rounded():
    assert mx.nd.exp(mx.nd.ones((1,))).asnumpy()[0] == np.float32(2.7182817)  # MXNet 1.9.1's value
    x = np.linspace(-20, 20, 4001, dtype=np.float32)
    want = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(mx.nd.exp(mx.nd.array(x)).asnumpy(), want)
    assert mx.nd.exp(mx.nd.array([1.0], dtype="float64")).asnumpy()[0] == np.exp(1.0)
