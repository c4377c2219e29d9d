"""Module: binding, the manual step, fit, data parallelism, parameters and errors."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import initializer, metric
from mxasync.io import NDArrayIter
from mxasync.module import Module


def _exact_accuracy(mod, x, y) -> float:
    out = mod.predict(NDArrayIter(x, y, batch_size=50)).asnumpy()
    return float((out.argmax(1) == y).mean())


def test_fit_reaches_high_accuracy(nets):
    (x, y), (vx, vy) = nets.digits_flat("train"), nets.digits_flat("val")
    np.random.seed(0)
    mx.random.seed(0)
    mod = Module(nets.mlp(64), context=mx.cpu())
    seen = []
    mod.fit(NDArrayIter(x, y, 32, shuffle=True), eval_data=NDArrayIter(vx, vy, 32), num_epoch=8,
            optimizer="sgd", optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
            initializer=initializer.Xavier(), eval_metric="acc",
            epoch_end_callback=lambda epoch, sym, arg, aux: seen.append((epoch, sorted(arg))),
            batch_end_callback=lambda p: seen.append(p.nbatch) if p.nbatch == 0 else None)
    assert _exact_accuracy(mod, vx, vy) >= 0.95
    assert seen[:2] == [0, (0, ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"])]
    name, value = mod.score(NDArrayIter(vx, vy, 32), "acc")[0]
    assert name == "accuracy" and value >= 0.94


def _fit_fixed(nets, contexts, update_on_kvstore=True, monkeypatch=None, epochs=2):
    (x, y) = nets.digits_flat("train")
    x, y = x[:192], y[:192]
    sym = nets.bn_mlp(16)
    args, aux = nets.fixed_params(sym, (1, 64))
    if monkeypatch is not None:
        monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "1" if update_on_kvstore else "0")
    mod = Module(sym, context=contexts)
    mod.fit(NDArrayIter(x, y, 32), num_epoch=epochs, arg_params=args, aux_params=aux, kvstore="local",
            optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3})
    arg, aux = mod.get_params()
    return mod, {k: v.asnumpy() for k, v in arg.items()}, {k: v.asnumpy() for k, v in aux.items()}


@pytest.mark.parametrize("on_kvstore", [True, False])
def test_two_contexts_match_one(nets, monkeypatch, on_kvstore):
    """Splitting each batch over cpu(0) and cpu(1) and summing gradients in the KVStore changes nothing
    (BatchNorm's batch statistics aside, which see half batches: its aux states are averaged)."""
    _, one_arg, _ = _fit_fixed(nets, [mx.cpu(0)])
    mod, two_arg, two_aux = _fit_fixed(nets, [mx.cpu(0), mx.cpu(1)], on_kvstore, monkeypatch)
    assert mod._kvstore is not None and mod._kvstore.type == "local"
    assert mod._update_on_kvstore is on_kvstore
    assert sorted(two_aux) == ["bn1_moving_mean", "bn1_moving_var"]
    for name in ("fc2_weight", "fc2_bias"):
        # BatchNorm normalises each half separately, so only compare loosely there; fc2 sees the same inputs
        assert np.abs(two_arg[name] - one_arg[name]).max() < 0.2


def test_two_contexts_match_one_exactly_without_batchnorm(nets):
    (x, y) = nets.digits_flat("train")
    x, y = x[:192], y[:192]
    results = []
    for contexts in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        sym = nets.mlp(16)
        args, _ = nets.fixed_params(sym, (1, 64))
        mod = Module(sym, context=contexts)
        mod.fit(NDArrayIter(x, y, 32), num_epoch=3, arg_params=args, optimizer="sgd",
                optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3})
        results.append({k: v.asnumpy() for k, v in mod.get_params()[0].items()})
    for name, value in results[0].items():
        np.testing.assert_allclose(results[1][name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_manual_step_and_outputs(nets):
    sym = nets.mlp(8, classes=3)
    mod = Module(sym, context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    assert mod._exec_group.slices == [slice(0, 2), slice(2, 8)]
    mod.init_params(initializer=initializer.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    batch = mx.io.DataBatch([mx.nd.array(np.random.default_rng(0).standard_normal((8, 5)))],
                            [mx.nd.array([0, 1, 2, 0, 1, 2, 0, 1])])
    before = mod.get_params()[0]["fc1_weight"].asnumpy()
    mod.forward_backward(batch)
    out = mod.get_outputs()[0]
    assert out.shape == (8, 3)
    np.testing.assert_allclose(out.asnumpy().sum(axis=1), 1.0, rtol=1e-5)
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == [(2, 3), (6, 3)]
    mod.update()
    after = mod.get_params()[0]["fc1_weight"].asnumpy()
    assert np.abs(after - before).max() > 0
    acc = metric.create("acc")
    mod.update_metric(acc, batch.label)
    assert acc.get()[0] == "accuracy" and acc.num_inst == 8
    assert mod.output_shapes == [("softmax_output", (8, 3))]


def test_forward_reshapes_for_another_batch_size(nets):
    mod = Module(nets.mlp(8, classes=3))
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))], for_training=False)
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.ones((3, 5))], [mx.nd.zeros((3,))]), is_train=False)
    assert mod.get_outputs()[0].shape == (3, 3)
    assert mod.data_shapes[0].shape == (3, 5)


def test_predict_strips_padding_and_score_counts_it(nets):
    (x, y) = nets.digits_flat("val")
    mod = Module(nets.mlp(8))
    mod.bind(data_shapes=[("data", (32, 64))], label_shapes=[("softmax_label", (32,))], for_training=False)
    mod.init_params()
    it = NDArrayIter(x[:70], y[:70], 32)  # 3 batches, the last padded with 26 examples
    assert mod.predict(it).shape == (70, 10)
    batches = mod.predict(it, merge_batches=False)
    assert [b[0].shape[0] for b in batches] == [32, 32, 6]
    name, _ = mod.score(it, "acc")[0]
    assert name == "accuracy"


def test_params_round_trip_and_errors(nets, tmp_path):
    sym = nets.mlp(8, classes=3)
    mod = Module(sym)
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    args, _ = nets.fixed_params(sym, (4, 5))
    with pytest.raises(mx.MXNetError, match="call init_params"):
        mod.get_params()
    with pytest.raises(mx.MXNetError, match="'fc2_bias' is not in the given parameters"):
        mod.init_params(arg_params={k: v for k, v in args.items() if k != "fc2_bias"})
    mod.init_params(arg_params={k: v for k, v in args.items() if k != "fc2_bias"}, allow_missing=True,
                    initializer=lambda desc, arr: arr.__setitem__(slice(None), 1.0))
    got = mod.get_params()[0]
    np.testing.assert_array_equal(got["fc2_bias"].asnumpy(), np.ones(3))
    np.testing.assert_array_equal(got["fc1_weight"].asnumpy(), args["fc1_weight"].asnumpy())
    mod.save_params(str(tmp_path / "p.params"))
    other = Module(sym)
    other.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    other.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(other.get_params()[0]["fc2_bias"].asnumpy(), np.ones(3))
    with pytest.raises(mx.MXNetError, match="call init_optimizer"):
        other.update()
    with pytest.raises(mx.MXNetError, match="data name 'x' is not an argument"):
        Module(sym, data_names=["x"])
    with pytest.raises(mx.MXNetError, match="some slices would be empty"):
        Module(sym, context=[mx.cpu(0), mx.cpu(1)]).bind(data_shapes=[("data", (1, 5))])


def test_fixed_params_and_input_grads(nets):
    sym = nets.mlp(8, classes=3)
    mod = Module(sym, fixed_param_names=["fc1_weight"])
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))], inputs_need_grad=True)
    mod.init_params(initializer=initializer.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    fixed = mod.get_params()[0]["fc1_weight"].asnumpy()
    batch = mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.array([0, 1, 2, 0])])
    mod.forward_backward(batch)
    mod.update()
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), fixed)
    assert mod.get_input_grads()[0].shape == (4, 5)
