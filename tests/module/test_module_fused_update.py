"""Module's local update path hands the updater lists, so SGD fuses the updates; results are unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mxasync as mx
from mxasync.module import Module


def _net():
    """Three dense layers (six parameters); fc1's weight learns at half rate, fc2's decays ten times as fast."""
    h = mx.sym.Variable("data")
    w1 = mx.sym.Variable("fc1_weight", lr_mult=0.5)
    w2 = mx.sym.Variable("fc2_weight", wd_mult=10.0)
    h = mx.sym.Activation(mx.sym.FullyConnected(h, weight=w1, num_hidden=24, name="fc1"), act_type="relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, weight=w2, num_hidden=16, name="fc2"), act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")


def _train(nets, contexts, aggregate_num, monkeypatch, steps=4, **opt_params):
    """Four SGD steps on fixed data and parameters; returns the module, its parameters and the op counts."""
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", str(aggregate_num))
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    x, y = nets.digits_flat("train")
    sym = _net()
    args, _ = nets.fixed_params(sym, (1, 64))
    mod = Module(sym, context=contexts)
    mod.bind(data_shapes=[("data", (32, 64))], label_shapes=[("softmax_label", (32,))])
    mod.init_params(arg_params=args)
    params = dict(learning_rate=0.1, momentum=0.9, wd=1e-3)
    params.update(opt_params)
    mod.init_optimizer(kvstore="local", optimizer="sgd", optimizer_params=params)
    mx.nd.waitall()
    mx.profiler.set_config(aggregate_stats=True)
    mx.profiler.dumps(reset=True)
    mx.profiler.set_state("run")
    try:
        for step in range(steps):
            lo = 32 * step
            mod.forward_backward(mx.io.DataBatch([mx.nd.array(x[lo:lo + 32])], [mx.nd.array(y[lo:lo + 32])]))
            mod.update()
        mx.nd.waitall()
    finally:
        mx.profiler.set_state("stop")
    counts = {k: v["Count"] for k, v in json.loads(mx.profiler.dumps(reset=True, format="json"))["Time"]["operator"].items()}
    return mod, {k: v.asnumpy() for k, v in mod.get_params()[0].items()}, counts


@pytest.mark.parametrize("opt_params", [{}, {"momentum": 0.0, "clip_gradient": 0.05}], ids=["momentum", "plain-clip"])
def test_fused_update_matches_per_weight_one_context(nets, monkeypatch, opt_params):
    mod, fused, counts = _train(nets, [mx.cpu()], 4, monkeypatch, **opt_params)
    assert mod._kvstore is None and mod._optimizer.aggregate_num == 4
    _, single, single_counts = _train(nets, [mx.cpu()], 0, monkeypatch, **opt_params)
    op = "multi_sgd_mom_update" if not opt_params else "multi_sgd_update"
    # six parameters: one fused op for four of them and one for the last two, per step
    assert counts.get(op) == 2 * 4 and counts.get(op[len("multi_"):]) is None
    assert single_counts.get(op[len("multi_"):]) == 6 * 4 and single_counts.get(op) is None
    assert sorted(fused) == sorted(single)
    for name in fused:
        np.testing.assert_allclose(fused[name], single[name], rtol=1e-4, atol=1e-5, err_msg=name)
    # the multipliers differ inside one fused group (fc1_weight, fc1_bias, fc2_weight, fc2_bias)
    names = mod._exec_group.param_names
    lrs = dict(zip(names, mod._optimizer._get_lrs(range(len(names))), strict=True))
    wds = dict(zip(names, mod._optimizer._get_wds(range(len(names))), strict=True))
    assert lrs["fc1_weight"] == pytest.approx(0.05) and lrs["fc1_bias"] == pytest.approx(0.1)
    assert wds["fc2_weight"] == pytest.approx(1e-2) and wds["fc1_weight"] == pytest.approx(1e-3)
    assert wds["fc2_bias"] == 0.0


def test_fused_update_matches_per_weight_two_contexts(nets, monkeypatch):
    """Gradients summed in a 'local' store and pulled back (update_on_kvstore off): each context updates its
    own copy with one fused op per group, and both copies equal the per-weight result."""
    mod, fused, counts = _train(nets, [mx.cpu(0), mx.cpu(1)], 4, monkeypatch)
    assert mod._kvstore is not None and not mod._update_on_kvstore
    _, single, _ = _train(nets, [mx.cpu(0), mx.cpu(1)], 0, monkeypatch)
    assert counts["multi_sgd_mom_update"] == 2 * 2 * 4  # two groups, two contexts, four steps
    for name in fused:
        np.testing.assert_allclose(fused[name], single[name], rtol=1e-4, atol=1e-5, err_msg=name)
    for block in mod._exec_group.param_arrays:
        np.testing.assert_allclose(block[0].asnumpy(), block[1].asnumpy(), rtol=1e-6, atol=1e-7)
