"""The local KVStore, mirroring MXNet 1.9's tests/python/unittest/test_kvstore.py (dense parts)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import kvstore

SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]


def init_kv(kv_type: str = "local"):
    kv = kvstore.create(kv_type)
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.init(KEYS, [mx.nd.zeros(SHAPE)] * len(KEYS))
    return kv


def init_kv_with_str(kv_type: str = "local"):
    kv = kvstore.create(kv_type)
    kv.init("a", mx.nd.zeros(SHAPE))
    kv.init(STR_KEYS, [mx.nd.zeros(SHAPE)] * len(STR_KEYS))
    return kv


def check_diff_to_scalar(arr, value):
    assert np.abs(arr.asnumpy() - value).max() == 0


@pytest.fixture(params=["local", "device"])
def kv_type(request):
    return request.param


def test_single_kv_pair(kv_type):
    for kv, key in ((init_kv(kv_type), 3), (init_kv_with_str(kv_type), "a")):
        kv.push(key, mx.nd.ones(SHAPE))
        val = mx.nd.empty(SHAPE)
        kv.pull(key, out=val)
        check_diff_to_scalar(val, 1)


def test_list_kv_pair(kv_type):
    for kv, keys in ((init_kv(kv_type), KEYS), (init_kv_with_str(kv_type), STR_KEYS)):
        kv.push(keys, [mx.nd.ones(SHAPE) * 4] * len(keys))
        val = [mx.nd.empty(SHAPE) for _ in keys]
        kv.pull(keys, out=val)
        for v in val:
            check_diff_to_scalar(v, 4)


def test_aggregator(kv_type):
    """Four values on four contexts are summed; the pull broadcasts to all four."""
    num_devs = 4
    devs = [mx.Context("cpu", i) for i in range(num_devs)]
    for kv, key, key_list in ((init_kv(kv_type), 3, KEYS), (init_kv_with_str(kv_type), "a", STR_KEYS)):
        vals = [mx.nd.ones(SHAPE, d) for d in devs]
        kv.push(key, vals)
        kv.pull(key, out=vals)
        for v in vals:
            check_diff_to_scalar(v, num_devs)
        vals = [[mx.nd.ones(SHAPE, d) * 2.0 for d in devs] for _ in key_list]
        kv.push(key_list, vals)
        kv.pull(key_list, out=vals)
        for vv in vals:
            for v in vv:
                check_diff_to_scalar(v, num_devs * 2.0)


def _updater(key, recv, local):
    assert isinstance(key, int)
    local += recv


def _str_updater(key, recv, local):
    assert isinstance(key, str)
    local += recv


def test_updater(kv_type):
    """With an updater, pushes accumulate: one push of 4 ones gives 4, four such pushes 16."""
    num_devs, num_push = 4, 4
    devs = [mx.Context("cpu", i) for i in range(num_devs)]
    for kv, upd, key, key_list in ((init_kv(kv_type), _updater, 3, KEYS),
                                   (init_kv_with_str(kv_type), _str_updater, "a", STR_KEYS)):
        kv._set_updater(upd)
        vals = [mx.nd.ones(SHAPE, d) for d in devs]
        kv.push(key, vals)
        kv.pull(key, out=vals)
        for v in vals:
            check_diff_to_scalar(v, num_devs)
        vals = [[mx.nd.ones(SHAPE, d) for d in devs] for _ in key_list]
        for _ in range(num_push):
            kv.push(key_list, vals)
        kv.pull(key_list, out=vals)
        for vv in vals:
            for v in vv:
                check_diff_to_scalar(v, num_devs * num_push)


@pytest.mark.parametrize("kv_type", ["local", "device", "local_allreduce_cpu", "local_allreduce_device",
                                     "local_update_cpu"])
def test_get_type(kv_type):
    kv = kvstore.create(kv_type)
    assert kv.type == kv_type
    assert (kv.rank, kv.num_workers) == (0, 1)
    kv.barrier()


def test_unknown_type():
    with pytest.raises(mx.MXNetError, match="unknown type 'nope'"):
        kvstore.create("nope")


def test_invalid_key_mixing():
    int_kv, str_kv = init_kv(), init_kv_with_str()
    val = mx.nd.ones(SHAPE)
    for kv, single, many in ((int_kv, "a", STR_KEYS), (str_kv, 3, KEYS)):
        for call in (kv.init, kv.push, lambda k, v, kv=kv: kv.pull(k, out=v)):
            with pytest.raises(mx.MXNetError, match="cannot be mixed"):
                call(single, val)
            with pytest.raises(mx.MXNetError, match="cannot be mixed"):
                call(many, [val] * len(many))


def test_errors_name_the_key():
    kv = init_kv()
    with pytest.raises(mx.MXNetError, match="key 99 was not initialised"):
        kv.push(99, mx.nd.ones(SHAPE))
    with pytest.raises(mx.MXNetError, match="already initialised"):
        kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(mx.MXNetError, match=r"holds shape \(4, 4\).*\(2, 2\)"):
        kv.push(3, mx.nd.ones((2, 2)))
    with pytest.raises(mx.MXNetError, match="3 keys need a list of 3 values"):
        kv.push(KEYS, mx.nd.ones(SHAPE))
    with pytest.raises(mx.MXNetError, match="keys must be int or str"):
        kv.push(3.5, mx.nd.ones(SHAPE))


def test_pushpull_and_broadcast(kv_type):
    kv = kvstore.create(kv_type)
    outs = [mx.nd.zeros(SHAPE, mx.cpu(i)) for i in range(2)]
    kv.broadcast("w", mx.nd.ones(SHAPE) * 3, out=outs)
    for o in outs:
        check_diff_to_scalar(o, 3)
    grads = [mx.nd.ones(SHAPE, mx.cpu(i)) for i in range(2)]
    kv.pushpull("w", grads)  # no out: the sum comes back into the pushed arrays
    for g in grads:
        check_diff_to_scalar(g, 2)


def test_repeated_key_in_one_push_is_summed():
    kv = init_kv()
    kv.push([3, 3], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2])
    out = mx.nd.empty(SHAPE)
    kv.pull(3, out=out)
    check_diff_to_scalar(out, 3)


def test_push_is_ordered_after_pending_writes():
    """A push reads its values through the engine: writes pushed before it are seen, later ones are not."""
    kv = init_kv()
    val = mx.nd.zeros(SHAPE)
    val[:] = 5
    kv.push(3, val)
    val[:] = 7
    out = mx.nd.empty(SHAPE)
    kv.pull(3, out=out, priority=-3)
    check_diff_to_scalar(out, 5)


def test_priorities_are_accepted():
    kv = init_kv()
    kv._set_updater(_updater)
    for i, k in enumerate(KEYS):
        kv.push(k, mx.nd.ones(SHAPE), priority=-i)
    outs = [mx.nd.empty(SHAPE) for _ in KEYS]
    kv.pull(KEYS, out=outs, priority=-1)
    for o in outs:
        check_diff_to_scalar(o, 1)


def test_optimizer_states_round_trip(tmp_path):
    kv = init_kv()
    with pytest.raises(mx.MXNetError, match="no optimizer"):
        kv.save_optimizer_states(str(tmp_path / "s"))

    class _Updater:  # the Updater protocol: callable plus get_states/set_states
        def __init__(self):
            self.states = {}

        def __call__(self, key, grad, weight):
            self.states[key] = self.states.get(key, 0) + 1
            weight += grad

        def get_states(self, dump_optimizer=False):
            import pickle

            return pickle.dumps(self.states)

        def set_states(self, data):
            import pickle

            self.states = pickle.loads(data)

    kv._set_updater(_Updater())
    kv.push(3, mx.nd.ones(SHAPE))
    kv.save_optimizer_states(str(tmp_path / "s"))
    kv2 = init_kv()
    kv2._set_updater(upd := _Updater())
    kv2.load_optimizer_states(str(tmp_path / "s"))
    assert upd.states == {3: 1}


def test_set_optimizer_updates_the_stored_weight(tmp_path):
    from mxasync import optimizer

    kv = kvstore.create("local")
    kv.init("w", mx.nd.ones(SHAPE))
    kv.set_optimizer(optimizer.create("sgd", learning_rate=0.1, momentum=0.5))
    grads = [mx.nd.ones(SHAPE, mx.cpu(i)) for i in range(2)]
    kv.push("w", grads)  # sum 2: momentum state -0.2, weight 0.8
    kv.push("w", grads)  # state 0.5 * -0.2 - 0.2 = -0.3, weight 0.5
    out = mx.nd.empty(SHAPE)
    kv.pull("w", out=out)
    np.testing.assert_allclose(out.asnumpy(), 0.5, rtol=1e-6)
    kv.save_optimizer_states(str(tmp_path / "states"), dump_optimizer=True)
    kv2 = kvstore.create("local")
    kv2.init("w", out)
    kv2.set_optimizer(optimizer.create("sgd", learning_rate=0.1, momentum=0.5))
    kv2.load_optimizer_states(str(tmp_path / "states"))
    kv2.push("w", grads)  # state 0.5 * -0.3 - 0.2 = -0.35, weight 0.15
    kv2.pull("w", out=out)
    np.testing.assert_allclose(out.asnumpy(), 0.15, rtol=1e-5)
