"""Registry, params, errors, SimpleOp, resources and the ops whose backward is not a derivative."""

from __future__ import annotations

import numpy as np
import pytest
from harness import ADD_TO, WRITE_TO, backward, forward

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.operator import OpContext, get_op, list_ops
from mxasync.operator.simple_op import SimpleOp


def test_aliases_and_lookup():
    assert get_op("_plus") is get_op("elemwise_add")
    assert get_op("add_n").name == "ElementWiseSum"
    assert "elemwise_add" in list_ops() and "_plus" not in list_ops() and "_plus" in list_ops(include_aliases=True)
    with pytest.raises(MXAsyncError, match="unknown operator 'Convolutoin'.*Convolution"):
        get_op("Convolutoin")


def test_prepare_is_cached_and_params_parse_strings():
    op = get_op("Convolution")
    a = op.prepare(kernel="(3, 3)", num_filter="8", no_bias="True")
    assert a is op.prepare(kernel="(3, 3)", num_filter="8", no_bias="True")
    assert a.params.kernel == (3, 3) and a.params.no_bias is True and a.params.num_filter == 8
    assert a.list_arguments() == ["data", "weight"]
    assert op.prepare(kernel=[3, 3], num_filter=8).params.kernel == (3, 3)  # unhashable kwargs still work
    assert get_op("softmax").prepare(temperature="None").params.temperature is None
    assert a.params.to_strings()["kernel"] == "(3, 3)"


def test_signature_and_doc():
    op = get_op("FullyConnected")
    sig = str(op.signature)
    assert sig.startswith("(data=None, weight=None, bias=None, num_hidden")  # params positional too, as MXNet
    assert "num_hidden : int, required" in op.doc
    assert "*data" in str(get_op("Concat").signature)
    assert get_op("Concat").key_var_num_args == "num_args"


@pytest.mark.parametrize("op,kwargs,shapes,msg", [
    ("Convolution", dict(kernel=(3, 3), num_filter=-2), None, r"Convolution: num_filter=-2"),
    ("Convolution", dict(kernel=(3, 3), num_filter=2, bogus=1), None, r"Convolution: unknown parameter bogus=1"),
    ("Convolution", dict(num_filter=2), None, r"Convolution: missing required parameter kernel"),
    ("Pooling", dict(kernel=(2, 2), pool_type="maxx"), None, r"Pooling: pool_type='maxx'"),
    ("Convolution", dict(kernel=(7, 7), num_filter=2), [(1, 1, 5, 5), None, None],
     r"Convolution: kernel=\(7, 7\).* larger than the input \(1, 1, 5, 5\)"),
    ("FullyConnected", dict(num_hidden=3, name="fc1"), [(2, 5), (3, 7), None],
     r"FullyConnected\(fc1\): weight has shape \(3, 7\) but data \(2, 5\) needs \(3, 5\)"),
    ("FullyConnected", dict(num_hidden=3), [(2, 5), (3, 5, 1), None],
     r"FullyConnected: weight has shape \(3, 5, 1\) but data \(2, 5\) needs \(3, 5\)"),
    ("elemwise_add", {}, [(2, 3), (3, 2)], r"elemwise_add: lhs and rhs must have the same shape"),
    ("broadcast_add", {}, [(2, 3), (4, 3)], r"broadcast_add: .*lhs \(2, 3\), rhs \(4, 3\)"),
    ("Reshape", dict(shape=(5, -1)), [(2, 3)], r"Reshape: cannot reshape"),
    ("Concat", dict(num_args=2, dim=1), [(2, 3), (3, 3)], r"Concat: arg1 has shape \(3, 3\)"),
    ("sum", dict(axis=5), [(2, 3)], r"sum: axis=\(5,\) is out of range"),
])
def test_errors_name_op_argument_and_values(op, kwargs, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prop = get_op(op).prepare(**kwargs)
        prop.infer_shape(shapes)


def test_softmax_output_backward_is_cross_entropy_gradient():
    d = np.array([[1.0, 2.0, 0.5]])
    lab = np.array([1.0])
    (out,) = forward("SoftmaxOutput", {}, [d, lab])
    g = backward("SoftmaxOutput", {}, [d, lab], [out], [np.zeros_like(out)], req=[WRITE_TO, 0])
    expect = out.copy()
    expect[0, 1] -= 1
    np.testing.assert_allclose(g[0], expect)


def test_regression_and_make_loss_backward():
    d, lab = np.array([[1.0, 2.0]]), np.array([[0.5, 3.0]])
    (out,) = forward("LinearRegressionOutput", {}, [d, lab])
    g = backward("LinearRegressionOutput", {}, [d, lab], [out], [np.ones_like(out)], req=[WRITE_TO, 0])
    np.testing.assert_allclose(g[0], (d - lab) / 2)
    (out,) = forward("MakeLoss", dict(grad_scale=2.0), [d])
    g = backward("MakeLoss", dict(grad_scale=2.0), [d], [out], [np.zeros_like(out)])
    np.testing.assert_allclose(g[0], 2.0)


def test_dropout_uses_the_random_resource_and_is_reproducible():
    x = np.ones((100,))
    from mxasync.runtime.resource import seed

    seed(3)
    mx.engine.get().wait_for_all()
    out1, mask1 = forward("Dropout", dict(p=0.5), [x], is_train=True)
    seed(3)
    mx.engine.get().wait_for_all()
    out2, _ = forward("Dropout", dict(p=0.5), [x], is_train=True)
    np.testing.assert_array_equal(out1, out2)
    assert set(np.unique(out1)) <= {0.0, 2.0} and 20 < (out1 == 0).sum() < 80
    g = backward("Dropout", dict(p=0.5), [x], [out1, mask1], [np.ones(100), None])
    np.testing.assert_array_equal(g[0], mask1)
    (test_out, _) = forward("Dropout", dict(p=0.5), [x], is_train=False)
    np.testing.assert_array_equal(test_out, x)


def test_batchnorm_moving_stats_only_in_training():
    x = np.random.default_rng(0).normal(2.0, 1.0, (8, 3))
    g, b = np.ones(3), np.zeros(3)
    mm, mv = np.zeros(3), np.ones(3)
    forward("BatchNorm", {}, [x, g, b], [mm, mv], is_train=False)
    np.testing.assert_array_equal(mm, 0)
    forward("BatchNorm", {}, [x, g, b], [mm, mv], is_train=True)
    np.testing.assert_allclose(mm, 0.1 * x.mean(0))
    mm2 = mm.copy()
    forward("BatchNorm", dict(use_global_stats=True), [x, g, b], [mm, mv], is_train=True)
    np.testing.assert_array_equal(mm, mm2)


def test_optimizer_ops_declare_mutated_inputs():
    assert get_op("adam_update").prepare(lr=0.1).mutate_inputs() == [2, 3]
    assert get_op("sgd_update").prepare(lr=0.1).mutate_inputs() == []


def test_resources_declared():
    from mxasync.runtime.resource import ResourceRequest

    assert get_op("_random_normal").prepare(shape=(2,)).resources() == [ResourceRequest.RANDOM]
    assert get_op("elemwise_add").prepare().resources() == []


def test_simple_op_registers_into_the_registry():
    def fwd(xp, env, x):
        return x * env.scalar

    SimpleOp("_test_scale", fwd, gradient=lambda xp, env, og: og * env.scalar, grad_kind="out_grad",
             scalar=True).register()
    op = get_op("_test_scale")
    assert op.prepare(scalar=3).declare_backward_dependency([1], [2], [3]) == [1]
    (out,) = forward("_test_scale", dict(scalar=3.0), [np.ones(2)])
    np.testing.assert_array_equal(out, 3.0)
    g = backward("_test_scale", dict(scalar=3.0), [np.ones(2)], [out], [np.ones(2)], req=ADD_TO,
                 grads=[np.ones(2)])
    np.testing.assert_array_equal(g[0], 4.0)
    assert get_op("smooth_l1").prepare(scalar="2").params.scalar == 2.0


def test_imperative_fast_path_shape():
    prop = get_op("elemwise_add").prepare()
    a = np.ones((2, 3), np.float32)
    assert prop.infer_shape([a.shape, a.shape]) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert prop.infer_type([a.dtype, a.dtype])[1] == [np.float32]
    c = np.empty_like(a)
    prop.forward_fn(mx.cpu())(OpContext(), [a, a], [WRITE_TO], [c], [])
    np.testing.assert_array_equal(c, 2)


def test_an_engine_array_as_a_param_value_is_read_first():
    # read before validation (the loading lock must not wait for the engine): its value counts, once it is computed
    a_min = mx.nd.array([1.0]) + 0.5
    out = mx.nd.clip(mx.nd.array([1.0, 2.0, 3.0]), a_min=a_min, a_max=2)
    np.testing.assert_array_equal(out.asnumpy(), [1.5, 2.0, 2.0])
    assert get_op("_full").prepare(shape=mx.nd.array([2, 3]), value=1).params.shape == (2, 3)
    with pytest.raises(MXAsyncError, match="clip: a_min="):
        get_op("clip").prepare(a_min=mx.nd.array([1.0, 2.0]), a_max=2)
