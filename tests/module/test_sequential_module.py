"""mx.mod.SequentialModule, PythonModule and PythonLossModule: two chained Modules and a Module followed by
a Python loss train to MXNet 1.9.1's weights (the expected values are MXNet's for the same script)."""

import numpy as np
import pytest

import mxasync as mx


def _data():
    rs = np.random.RandomState(1)
    x = rs.rand(12, 4).astype("float32")
    y = (rs.rand(12) * 3).astype("int32").astype("float32")
    init = {"fc1_weight": mx.nd.array(rs.rand(5, 4) - .5), "fc1_bias": mx.nd.zeros(5),
            "fc2_weight": mx.nd.array(rs.rand(3, 5) - .5), "fc2_bias": mx.nd.zeros(3)}
    return x, y, init


def test_two_modules_in_sequence_train_as_mxnets():
    x, y, init = _data()
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    net1 = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=5, name="fc1"),
                             act_type="relu")
    net2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc2"),
                                name="softmax")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(net1, label_names=None)).add(mx.mod.Module(net2), take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=2, optimizer_params=(("learning_rate", 0.5),), arg_params=init, eval_metric="acc")
    arg, _ = seq.get_params()
    np.testing.assert_allclose(arg["fc1_weight"].asnumpy()[0], [-0.40538, -0.11941, 0.12651, -0.10776], atol=1e-5)
    np.testing.assert_allclose(arg["fc2_bias"].asnumpy(), [0.4273, -0.16612, -0.26118], atol=1e-5)
    assert seq.score(it, "acc") == [("accuracy", pytest.approx(2 / 3))]
    assert seq.output_shapes == [("softmax_output", (4, 3))]
    with pytest.raises(mx.MXNetError, match='unknown meta "take_label"'):
        seq.add(mx.mod.Module(net2), take_label=True)


def test_python_loss_module_ends_a_sequence():
    x, _, _ = _data()
    it = mx.io.NDArrayIter(x, x.sum(axis=1).astype("float32"), batch_size=4)
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc")
    seq = mx.mod.SequentialModule()
    loss = mx.mod.PythonLossModule(grad_func=lambda scores, labels: (scores - labels.reshape((-1, 1))) / 4)
    seq.add(mx.mod.Module(fc, label_names=None)).add(loss, take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=3, optimizer_params=(("learning_rate", 0.1),), eval_metric="mse",
            arg_params={"fc_weight": mx.nd.array([[0.1, 0.2, 0.3, 0.4]]), "fc_bias": mx.nd.zeros(1)})
    arg, _ = seq.get_params()
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), [[0.26225, 0.39472, 0.37645, 0.53398]], atol=1e-5)
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), [0.26993], atol=1e-5)
    assert isinstance(loss, mx.mod.PythonModule) and loss.output_names == ["pyloss_output"]
