"""mx.contrib.svrg_optimization: SVRGModule trains a linear regression to MXNet 1.9.1's weights (the values
below are MXNet's for the same data, start and schedule)."""

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib.svrg_optimization import SVRGModule
from mxasync.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _linear():
    data, label = mx.sym.Variable("data"), mx.sym.Variable("lin_reg_label")
    fc = mx.sym.FullyConnected(data, num_hidden=1, name="fc")
    return mx.sym.LinearRegressionOutput(fc, label, name="lro")


def test_svrg_fit_gives_mxnets_weights():
    rs = np.random.RandomState(0)
    x = rs.rand(20, 3).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5]) + 0.3).astype("float32")
    it = mx.io.NDArrayIter(x, y, batch_size=8, label_name="lin_reg_label")
    mod = SVRGModule(_linear(), data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    mod.fit(it, num_epoch=3, optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), eval_metric="mse",
            arg_params={"fc_weight": mx.nd.array([[0.1, 0.2, 0.3]]), "fc_bias": mx.nd.array([0.0])})
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), [[0.0519, -0.128077, 0.230413]], atol=2e-6)
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), [-0.193691], atol=2e-6)
    assert isinstance(mod._optimizer, _SVRGOptimizer) and mod._optimizer.default_opt.__class__.__name__ == "SGD"


@pytest.mark.parametrize("freq,err", [(None, TypeError), (0, ValueError), (1.5, TypeError)])
def test_update_freq_must_be_a_positive_int(freq, err):
    with pytest.raises(err, match="update_freq"):
        SVRGModule(_linear(), label_names=["lin_reg_label"], update_freq=freq)
