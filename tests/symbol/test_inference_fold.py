"""Inference BatchNorm folded into its convolution (``mxasync/executor/inference_fold.py``).

The references are the same ops run imperatively one by one (no folding there)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

RNG = np.random.default_rng(7)


def _chain(groups=1, bias=False, relu=True, fix_gamma=False, stride=1):
    x = mx.sym.var("data")
    y = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), stride=(stride, stride), num_filter=4, num_group=groups,
                           no_bias=not bias, name="c")
    y = mx.sym.BatchNorm(y, fix_gamma=fix_gamma, eps=1e-3, name="bn")
    return mx.sym.Activation(y, act_type="relu", name="r") if relu else y


def _bind(sym, shape=(2, 4, 6, 6), dtype="float32"):
    ex = sym.simple_bind(mx.cpu(), data=shape, grad_req="null", type_dict={"data": dtype})
    for name, a in list(ex.arg_dict.items()) + list(ex.aux_dict.items()):
        v = RNG.standard_normal(a.shape).astype(a.dtype)
        a[:] = np.abs(v) + 0.5 if name.endswith("var") else v
    return ex


def _reference(ex, is_train=False, relu=True):
    a, aux = ex.arg_dict, ex.aux_dict
    with mx.autograd.train_mode() if is_train else mx.autograd.predict_mode():
        conv = ex._symbol.get_internals()["c_output"]
        kw = {k: v for k, v in conv.list_attr().items() if not k.startswith("__")}
        y = mx.nd.Convolution(*[a[k] for k in ("data", "c_weight", "c_bias") if k in a], **kw)
        bn = {k: v for k, v in ex._symbol.get_internals()["bn_output"].list_attr().items() if not k.startswith("__")}
        y = mx.nd.BatchNorm(y, a["bn_gamma"], a["bn_beta"], aux["bn_moving_mean"], aux["bn_moving_var"], **bn)
        return (mx.nd.relu(y) if relu else y).asnumpy()


@pytest.mark.parametrize(("groups", "bias", "relu", "fix_gamma", "stride"),
                         [(1, False, True, False, 1), (4, True, True, True, 2), (2, True, False, False, 1)])
def test_folded_inference_matches_the_unfolded_ops(groups, bias, relu, fix_gamma, stride):
    sym = _chain(groups, bias, relu, fix_gamma, stride)
    ex = _bind(sym)
    assert [f.names[:2] for f in ex._folds] == [("c", "bn")]
    assert (ex._folds[0].act is not None) == relu
    got = ex.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(got, _reference(ex, relu=relu), rtol=1e-4, atol=1e-4)


def test_float64_chain_folds_through_convolution_and_activation():
    ex = _bind(_chain(bias=True), dtype="float64")
    assert [f.names for f in ex._folds] == [("c", "bn", "r")]
    got = ex.forward(is_train=False)[0].asnumpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _reference(ex), rtol=1e-10, atol=1e-10)


def test_the_symbol_the_user_sees_is_unchanged():
    sym = _chain()
    before = (sym.tojson(), sym.list_arguments(), sym.list_auxiliary_states())
    ex = _bind(sym)
    ex.forward(is_train=False)[0].wait_to_read()
    assert (sym.tojson(), sym.list_arguments(), sym.list_auxiliary_states()) == before
    assert ex.get_optimized_symbol().tojson() == sym.tojson()


def test_training_forward_uses_batch_statistics_unfolded():
    ex = _bind(_chain())
    mean_before = ex.aux_dict["bn_moving_mean"].asnumpy()
    got = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(got, _reference(ex, is_train=True), rtol=1e-4, atol=1e-4)
    assert not np.allclose(ex.aux_dict["bn_moving_mean"].asnumpy(), mean_before)  # the stats moved


def test_no_fold_when_the_conv_output_has_another_reader():
    x = mx.sym.var("data")
    c = mx.sym.Convolution(x, kernel=(1, 1), num_filter=4, no_bias=True, name="c")
    sym = mx.sym.Group([mx.sym.BatchNorm(c, name="bn"), c * 2])
    assert _bind(sym)._folds == []
    sym2 = mx.sym.Group([mx.sym.BatchNorm(c, name="bn"), c])  # the conv output is a head too
    assert _bind(sym2)._folds == []


def test_relu_left_unfused_when_the_batchnorm_output_is_read_elsewhere():
    x = mx.sym.var("data")
    bn = mx.sym.BatchNorm(mx.sym.Convolution(x, kernel=(1, 1), num_filter=4, no_bias=True, name="c"), name="bn")
    sym = mx.sym.Group([mx.sym.relu(bn), bn + 1])
    ex = _bind(sym)
    assert [(f.names, f.act) for f in ex._folds] == [(("c", "bn"), None)]
    got = ex.forward(is_train=False)
    ref = _reference(ex, relu=False)
    np.testing.assert_allclose(got[1].asnumpy(), ref + 1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0].asnumpy(), np.maximum(ref, 0), rtol=1e-4, atol=1e-4)


def test_changed_parameters_are_folded_again():
    ex = _bind(_chain(bias=True))
    first = ex.forward(is_train=False)[0].asnumpy()
    for name, arrays in (("bn_gamma", ex.arg_dict), ("c_weight", ex.arg_dict), ("c_bias", ex.arg_dict),
                         ("bn_moving_var", ex.aux_dict), ("bn_moving_mean", ex.aux_dict)):
        arrays[name][:] = arrays[name] * 1.5 + 0.25
        got = ex.forward(is_train=False)[0].asnumpy()
        np.testing.assert_allclose(got, _reference(ex), rtol=1e-4, atol=1e-4, err_msg=name)
    assert not np.allclose(got, first)


def test_a_monitored_run_sees_every_op():
    ex = _bind(_chain())
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    got = ex.forward(is_train=False)[0].asnumpy()
    assert any(n.startswith("bn") for n in seen)
    np.testing.assert_allclose(got, _reference(ex), rtol=1e-4, atol=1e-4)


def test_hybridized_gluon_net_matches_imperative():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(8, 3, padding=1, use_bias=False), mx.gluon.nn.BatchNorm(), mx.gluon.nn.Activation("relu"),
            mx.gluon.nn.Conv2D(8, 3, padding=1, groups=8, use_bias=False), mx.gluon.nn.BatchNorm(),
            mx.gluon.nn.Activation("relu"))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(RNG.standard_normal((2, 3, 8, 8)).astype(np.float32))
    with mx.autograd.record():  # move the moving statistics off their initial values
        net(x)
    ref = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-4, atol=1e-4)
    net[1].gamma.set_data(net[1].gamma.data() * 2)  # a parameter changed: folded again
    got = net(x).asnumpy()
    net.hybridize(False)
    np.testing.assert_allclose(got, net(x).asnumpy(), rtol=1e-4, atol=1e-4)
    assert not np.allclose(got, ref)
