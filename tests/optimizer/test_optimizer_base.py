"""Optimizer base behaviour: registry, multipliers, update counts, schedulers, Updater states, multi-precision."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import mxasync as mx
from mxasync import lr_scheduler
from mxasync import optimizer as opt_mod


def test_create_and_register():
    assert isinstance(opt_mod.create("SGD", momentum=0.9), opt_mod.SGD)
    assert opt_mod.Optimizer.create_optimizer("adam").lr == 0.001
    assert opt_mod.create("rmsprop").learning_rate == 0.001
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        opt_mod.create("nope")

    @opt_mod.register
    class _MyTestOpt(opt_mod.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = grad

    assert type(opt_mod.create("_mytestopt")) is _MyTestOpt
    del opt_mod.Optimizer.opt_registry["_mytestopt"]


def test_multipliers_by_name_and_index():
    idx2name = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"}
    opt = opt_mod.SGD(learning_rate=1.0, wd=0.1, param_idx2name=idx2name)
    # MXNet: no weight decay for names that do not end in _weight or _gamma
    assert [opt._get_wd(i) for i in range(4)] == [0.1, 0.0, 0.1, 0.0]
    opt.set_lr_mult({"fc_weight": 0.5, 3: 2.0})
    opt.set_wd_mult({"fc_bias": 3.0})
    assert [opt._get_lr(i) for i in range(4)] == [0.5, 1.0, 1.0, 2.0]
    assert opt._get_wd(1) == pytest.approx(0.3)
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    opt.update(0, w, g, None)
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.5 * (1 + 0.1))


def test_multipliers_from_symbol_attributes():
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("fc_weight", lr_mult=0.1, wd_mult=2.0)
    net = mx.sym.FullyConnected(data, weight=weight, num_hidden=2, name="fc")
    opt = opt_mod.SGD(learning_rate=1.0, wd=0.5, sym=net, param_idx2name={0: "fc_weight", 1: "fc_bias"})
    assert opt._get_lr(0) == pytest.approx(0.1) and opt._get_wd(0) == pytest.approx(1.0)
    assert opt._get_lr(1) == 1.0 and opt._get_wd(1) == 0.0


def test_update_counts_and_scheduler_hook():
    sched = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = opt_mod.SGD(lr_scheduler=sched, begin_num_update=0)
    w, g = mx.nd.zeros((1,)), mx.nd.ones((1,))
    seen = []
    for _ in range(5):
        opt.update(0, w, g, None)
        seen.append(opt.learning_rate)
    assert opt.num_update == 5 and opt._index_update_count == {0: 5}
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25]
    # steps taken: 1 + 1 + 0.5 + 0.5 + 0.25 (lr looked up after counting, as in MXNet)
    np.testing.assert_allclose(w.asnumpy(), [-3.25])
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.1)
    # a second index starts from begin_num_update; num_update is the max over indices
    opt.update(1, mx.nd.zeros((1,)), g, None)
    assert opt._index_update_count[1] == 1 and opt.num_update == 5


def test_learning_rate_overrides_scheduler_base():
    sched = lr_scheduler.FactorScheduler(step=10, base_lr=1.0)
    with pytest.warns(UserWarning):
        opt = opt_mod.SGD(learning_rate=0.3, lr_scheduler=sched)
    assert sched.base_lr == 0.3 and opt.learning_rate == 0.3


def test_rescale_grad_is_settable():
    opt = opt_mod.SGD(learning_rate=1.0)
    opt.rescale_grad = 1.0 / 4
    w = mx.nd.zeros((3,))
    opt.update(0, w, mx.nd.ones((3,)) * 4, None)
    np.testing.assert_allclose(w.asnumpy(), -1.0)


def test_updater_states_pickle_round_trip():
    opt = opt_mod.SGD(learning_rate=0.1, momentum=0.9)
    upd = opt_mod.get_updater(opt)
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    upd(0, g, w)
    upd("b", mx.nd.ones((2,)), mx.nd.ones((2,)))
    blob = upd.get_states()
    assert set(pickle.loads(blob)) == {0, "b"}
    fresh = opt_mod.get_updater(opt_mod.SGD(learning_rate=0.1, momentum=0.9))
    fresh.set_states(blob)
    np.testing.assert_allclose(fresh.states[0].asnumpy(), upd.states[0].asnumpy())
    w2 = w.copy()
    fresh(0, g, w2)
    upd(0, g, w)
    np.testing.assert_allclose(w2.asnumpy(), w.asnumpy())
    both = opt_mod.get_updater(opt_mod.SGD())
    both.set_states(upd.get_states(dump_optimizer=True))
    assert both.optimizer.momentum == 0.9 and both.optimizer.num_update == upd.optimizer.num_update


def test_updater_takes_lists_and_bytes_keys():
    upd = opt_mod.get_updater(opt_mod.SGD(learning_rate=1.0))
    ws = [mx.nd.zeros((2,)), mx.nd.zeros((3,))]
    upd([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))], ws)
    upd(b"k", mx.nd.ones((1,)), mx.nd.zeros((1,)))
    assert [w.asnumpy().tolist() for w in ws] == [[-1, -1], [-1, -1, -1]] and "k" in upd.states


@pytest.mark.parametrize("name", ["sgd", "nag", "adam"])
def test_multi_precision_keeps_a_float32_master(name):
    opt = opt_mod.create(name, learning_rate=0.01, multi_precision=True, **({"momentum": 0.9} if name != "adam"
                                                                              else {}))
    upd = opt_mod.get_updater(opt)
    w = mx.nd.array(np.full(4, 1.0), dtype="float16")
    for _ in range(3):
        upd(0, mx.nd.array(np.full(4, 1e-2), dtype="float16"), w)
    state = upd.states[0]
    master = state[1] if name != "adam" else state[0]
    assert master.dtype == np.float32 and w.dtype == np.float16
    # tiny steps accumulate in the float32 master although each is below float16's resolution at 1.0
    assert master.asnumpy()[0] < 1.0 and w.asnumpy()[0] == np.float16(master.asnumpy()[0])


def test_float16_without_multi_precision_warns():
    with pytest.warns(UserWarning, match="multi_precision"):
        opt_mod.SGD(momentum=0.9).create_state_multi_precision(0, mx.nd.zeros((2,), dtype="float16"))


def test_updates_are_ordered_engine_ops():
    # many pushes with no sync in between: the engine orders them after each other and after the writes
    opt = opt_mod.SGD(learning_rate=0.5, momentum=0.5)
    upd = opt_mod.get_updater(opt)
    w, g = mx.nd.zeros((1000,)), mx.nd.zeros((1000,))
    mom, wn = 0.0, 0.0
    for i in range(20):
        g[:] = float(i)
        upd(0, g, w)
        mom = 0.5 * mom - 0.5 * i
        wn += mom
    np.testing.assert_allclose(w.asnumpy(), wn, rtol=1e-5)
