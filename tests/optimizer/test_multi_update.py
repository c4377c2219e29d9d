"""Fused SGD updates: the multi_sgd ops against the single-weight ops, and the Updater's aggregation."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mxasync as mx
from mxasync import optimizer as opt_mod

SHAPES = [(5, 4), (5,), (3, 5), (3,), (7,)]


def _arrays(dtype, seed=0, lo=-1.0, hi=1.0):
    rng = np.random.default_rng(seed)
    return [mx.nd.array(rng.uniform(lo, hi, s), dtype=dtype) for s in SHAPES]


def _copies(arrays):
    return [a.copy() for a in arrays]


def _count_ops(fn) -> dict:
    """``{op name: number of engine ops}`` pushed by ``fn`` (through the profiler)."""
    mx.nd.waitall()
    mx.profiler.set_config(aggregate_stats=True)
    mx.profiler.dumps(reset=True)
    mx.profiler.set_state("run")
    try:
        fn()
        mx.nd.waitall()
    finally:
        mx.profiler.set_state("stop")
    return {k: v["Count"] for k, v in json.loads(mx.profiler.dumps(reset=True, format="json"))["Time"]["operator"].items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("clip", [-1.0, 0.3])
def test_multi_sgd_mom_update_matches_single_op(dtype, clip):
    ws, gs, ms = _arrays(dtype, 0), _arrays(dtype, 1, -3, 3), _arrays(dtype, 2, -0.1, 0.1)
    ws1, ms1 = _copies(ws), _copies(ms)
    lrs, wds = (0.1, 0.2, 0.05, 0.3, 0.01), (0.01, 0.0, 0.02, 0.0, 0.5)
    kw = dict(rescale_grad=0.5, clip_gradient=clip, momentum=0.9)
    for _step in range(3):
        args = [x for t in zip(ws, gs, ms, strict=True) for x in t]
        res = mx.nd.multi_sgd_mom_update(*args, out=ws, lrs=lrs, wds=wds, num_weights=len(ws), **kw)
        assert res is ws
        for w, g, m, lr, wd in zip(ws1, gs, ms1, lrs, wds, strict=True):
            mx.nd.sgd_mom_update(w, g, m, out=w, lr=lr, wd=wd, **kw)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for a, b in zip(ws + ms, ws1 + ms1, strict=True):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), **tol)


@pytest.mark.parametrize("clip", [-1.0, 0.3])
def test_multi_sgd_update_matches_single_op(clip):
    ws, gs = _arrays("float32", 0), _arrays("float32", 1, -3, 3)
    ws1 = _copies(ws)
    lrs, wds = (0.1, 0.2, 0.05, 0.3, 0.01), (0.01, 0.0, 0.02, 0.0, 0.5)
    args = [x for t in zip(ws, gs, strict=True) for x in t]
    mx.nd.multi_sgd_update(*args, out=ws, lrs=lrs, wds=wds, num_weights=len(ws), rescale_grad=2.0, clip_gradient=clip)
    for w, g, lr, wd in zip(ws1, gs, lrs, wds, strict=True):
        mx.nd.sgd_update(w, g, out=w, lr=lr, wd=wd, rescale_grad=2.0, clip_gradient=clip)
    for a, b in zip(ws, ws1, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_multi_update_into_other_outputs_leaves_weights_alone():
    w, g, m = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.zeros((3,))
    out = mx.nd.multi_sgd_mom_update(w, g, m, lrs=(0.5,), wds=(0.0,), momentum=0.9, num_weights=1)
    np.testing.assert_allclose(out.asnumpy(), 0.5)
    np.testing.assert_allclose(w.asnumpy(), 1.0)
    np.testing.assert_allclose(m.asnumpy(), -0.5)  # the momentum is always updated in place


def test_multi_update_errors_teach():
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    with pytest.raises(mx.MXNetError, match=r"multi_sgd_update: got 4 inputs but num_weights=4 needs 8.*num_weights=2"):
        mx.nd.multi_sgd_update(w, g, w.copy(), g.copy(), lrs=(0.1, 0.1), wds=(0.0, 0.0))
    with pytest.raises(mx.MXNetError, match=r"multi_sgd_update: lrs has 1 values but num_weights=2"):
        mx.nd.multi_sgd_update(w, g, w.copy(), g.copy(), lrs=(0.1,), wds=(0.0, 0.0), num_weights=2)
    with pytest.raises(mx.MXNetError, match=r"multi_sgd_mom_update: mom_0 has shape \(2,\) but weight_0 has \(3,\)"):
        mx.nd.multi_sgd_mom_update(w, g, mx.nd.zeros((2,)), lrs=(0.1,), wds=(0.0,), num_weights=1)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_update_on_lists_pushes_one_op_per_group(momentum):
    opt = opt_mod.SGD(learning_rate=0.1, momentum=momentum, wd=0.01)
    assert opt.aggregate_num == 4
    ws, gs = _arrays("float32", 0), _arrays("float32", 1)
    states = [opt.create_state(i, w) for i, w in enumerate(ws)]
    counts = _count_ops(lambda: opt.update(list(range(5)), ws, gs, states))
    fused, single = ("multi_sgd_mom_update", "sgd_mom_update") if momentum else ("multi_sgd_update", "sgd_update")
    assert counts == {fused: 1, single: 1}  # 5 weights: a group of 4, then one on its own
    assert opt.num_update == 1


def _run_updater(aggregate_num, dtype="float32", steps=3, **kwargs):
    opt = opt_mod.create("sgd", param_idx2name={i: f"p{i}_weight" if i % 2 == 0 else f"p{i}_bias"
                                                for i in range(len(SHAPES))}, **kwargs)
    opt.aggregate_num = aggregate_num
    opt.set_lr_mult({"p0_weight": 0.5, 3: 2.0})
    opt.set_wd_mult({"p2_weight": 3.0})
    updater = opt_mod.get_updater(opt)
    ws = _arrays(dtype, 0)
    for step in range(steps):
        gs = _arrays(dtype, 10 + step, -2, 2)
        updater(list(range(len(ws))), gs, ws)
    return [w.asnumpy() for w in ws], opt


CONFIGS = {  # fresh kwargs per run: a scheduler keeps state
    "momentum": lambda: dict(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5),
    "plain-clip": lambda: dict(learning_rate=0.1, wd=0.01, clip_gradient=0.5),
    "scheduler": lambda: dict(momentum=0.8, wd=0.001,
                              lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)),
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("aggregate_num", [2, 4, 16])
def test_aggregated_updater_matches_per_weight(config, aggregate_num):
    fused, opt = _run_updater(aggregate_num, **CONFIGS[config]())
    single, ref_opt = _run_updater(0, **CONFIGS[config]())
    assert opt.num_update == ref_opt.num_update == 3
    for a, b in zip(fused, single, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_updater_groups_by_dtype_and_multi_precision():
    opt = opt_mod.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True)
    ref_opt = opt_mod.create("sgd", learning_rate=0.1, momentum=0.9, multi_precision=True)
    ref_opt.aggregate_num = 0
    rng = np.random.default_rng(0)
    w16 = [rng.uniform(-1, 1, s) for s in SHAPES]
    ws = [mx.nd.array(w, dtype="float16" if i % 2 else "float32") for i, w in enumerate(w16)]
    ref_ws = _copies(ws)
    updater, ref_updater = opt_mod.get_updater(opt), opt_mod.get_updater(ref_opt)
    for _step in range(3):
        gs = [mx.nd.array(rng.uniform(-1, 1, s), dtype=w.dtype) for s, w in zip(SHAPES, ws, strict=True)]
        counts = _count_ops(lambda: updater(list(range(5)), gs, ws))  # noqa: B023
        ref_updater(list(range(5)), gs, ref_ws)
    # float32 weights 0, 2, 4 are one fused op; float16 weights 1, 3 one fused op on their master copies
    assert counts["multi_sgd_mom_update"] == 2 and "sgd_mom_update" not in counts
    for a, b in zip(ws, ref_ws, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-3, atol=1e-3)
    assert isinstance(updater.states[1], tuple) and updater.states[1][1].dtype == np.float32


def test_updater_rejects_unpaired_lists():
    updater = opt_mod.get_updater(opt_mod.SGD())
    with pytest.raises(ValueError, match="2 indices, 1 gradients and 2 weights"):
        updater([0, 1], [mx.nd.ones((2,))], [mx.nd.ones((2,)), mx.nd.ones((2,))])
