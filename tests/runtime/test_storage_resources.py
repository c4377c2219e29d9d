"""Storage pool, resources, contexts and the profiler."""

from __future__ import annotations

import asyncio
import json
import threading

import numpy as np
import pytest

import mxasync as mx
from mxasync.runtime.resource import ResourceManager, ResourceRequest
from mxasync.runtime.storage import CPUStorage, Storage

MB = 1 << 20

# what these tests check only a threaded engine does (NaiveEngine runs every op at its push)
threaded_only = pytest.mark.skipif(mx.engine.get().type == "NaiveEngine",
                                   reason="the process-wide engine is NaiveEngine (MXASYNC_ENGINE_TYPE=naive)")


@pytest.fixture
def storage():
    st = CPUStorage(mx.cpu(99))
    yield st
    st.release_all()


@pytest.mark.parametrize(
    "strategy, sizes, expected_capacity",
    [
        ("naive", [MB + 1], [MB + 64]),
        ("round", [MB + 1], [2 * MB]),
        ("round", [(1 << 24) + 1], [2 << 24]),  # above the linear cutoff: multiples of 2**24
        ("unpooled", [MB + 1], [MB + 1]),
    ],
)
def test_strategies_round_sizes(storage, strategy, sizes, expected_capacity):
    storage.set_strategy(strategy)
    handles = [storage.alloc(s) for s in sizes]
    assert [h.capacity for h in handles] == expected_capacity
    assert all(h.buffer.nbytes >= h.size for h in handles)


def test_pool_reuses_and_reports(storage):
    h = storage.alloc(3 * MB)
    buf_id = id(h.buffer)
    assert storage.stats()["in_use"] == 3 * MB and storage.stats()["pooled"] == 0
    storage.free(h)
    assert storage.stats()["in_use"] == 0 and storage.stats()["pooled"] == 3 * MB
    h2 = storage.alloc(3 * MB)
    assert id(h2.buffer) == buf_id and storage.stats()["pool_hits"] == 1
    assert storage.stats()["peak"] == 3 * MB
    storage.free(h2)
    storage.release_all()
    assert storage.stats()["pooled"] == 0


def test_round_strategy_shares_near_sizes(storage):
    storage.set_strategy("round")
    h = storage.alloc(3 * MB)
    storage.free(h)
    h2 = storage.alloc(3 * MB + 12345)  # same power-of-two bucket
    assert storage.stats()["pool_hits"] == 1
    storage.free(h2)


def test_small_blocks_bypass_the_pool(storage):
    h = storage.alloc(100)
    assert not h.pooled
    storage.free(h)
    assert storage.stats()["pooled"] == 0 and storage.stats()["in_use"] == 0


def test_double_free_and_foreign_free_raise(storage):
    h = storage.alloc(MB)
    storage.free(h)
    with pytest.raises(mx.MXNetError, match="freed twice"):
        storage.free(h)
    other = CPUStorage(mx.cpu(98)).alloc(MB)
    with pytest.raises(mx.MXNetError, match="freed here"):
        storage.free(other)


@threaded_only
def test_free_through_engine_waits_for_pending_ops(storage):
    eng = mx.engine.get()
    h = storage.alloc(2 * MB)
    var = eng.new_variable()
    gate = threading.Event()
    eng.push_sync(lambda r: gate.wait(5), mx.cpu(), [var], [], inline=False)
    eng.delete_variable(lambda r: storage.free(h), mx.cpu(), var)
    assert storage.stats()["in_use"] == 2 * MB  # still used by the pending reader
    gate.set()
    eng.wait_for_all()
    assert storage.stats()["in_use"] == 0 and storage.stats()["pooled"] == 2 * MB


def test_parked_blocks_go_to_the_next_output_of_their_size(storage):
    eng = mx.engine.get()
    storage.park_lag = 0
    h, var = storage.alloc(2 * MB), eng.new_variable()
    assert storage.park(h, var) is None
    assert storage.stats()["in_use"] == 0 and storage.stats()["pooled"] == 2 * MB
    assert storage.take_parked(3 * MB) is None  # exact sizes only
    got = storage.take_parked(2 * MB)
    assert got == (h, var) and storage.stats()["in_use"] == 2 * MB and storage.stats()["pooled"] == 0
    assert storage.take_parked(2 * MB) is None


def test_parking_is_bounded_and_returns_the_oldest(storage):
    eng = mx.engine.get()
    storage.park_depth, storage.park_lag = 2, 0
    entries = [(storage.alloc(MB), eng.new_variable()) for _ in range(3)]
    assert storage.park(*entries[0]) is None and storage.park(*entries[1]) is None
    assert storage.park(*entries[2]) == entries[0]  # the caller frees it through the engine
    assert storage.stats()["in_use"] == MB and storage.stats()["pooled"] == 2 * MB
    assert storage.take_parked(MB) == entries[2]  # newest first: its memory is the warmest
    storage.set_strategy("unpooled")
    h, v = storage.alloc(MB), eng.new_variable()
    assert storage.park(h, v) == (h, v)  # nothing parks without a pool


def test_park_lag_leaves_newer_blocks_in_flight(storage):
    """With lag 1 a block is reused only behind one newer dead array: two outputs of a size
    can be computed at once (one per worker), the next takes the warmer of the older blocks."""
    eng = mx.engine.get()
    storage.park_lag, storage.park_depth = 1, 4
    entries = [(storage.alloc(MB), eng.new_variable()) for _ in range(3)]
    storage.park(*entries[0])
    assert storage.take_parked(MB) is None  # nothing newer in flight yet
    storage.park(*entries[1])
    storage.park(*entries[2])
    assert storage.take_parked(MB) == entries[1]  # the newest but one
    assert storage.take_parked(MB) == entries[0]
    assert storage.take_parked(MB) is None  # entries[2] stays for the lag


def test_storage_get_is_per_context():
    assert Storage.get(mx.cpu(5)) is Storage.get(mx.Context("cpu", 5))
    assert Storage.get(mx.cpu(5)) is not Storage.get(mx.cpu(6))


def _draw(res, out, n=4):
    def fn(rctx):
        out.append(res.get_random().standard_normal(n))

    return fn


def test_seed_then_sample_repeats_exactly():
    eng = mx.engine.get()
    res = ResourceManager.get().request(mx.cpu(), ResourceRequest.RANDOM)
    runs = []
    for _ in range(2):
        out = []
        mx.random.seed(7)
        for _ in range(20):  # interleave with unrelated pool work
            eng.push_sync(lambda r: sum(range(1000)), mx.cpu(), [], [eng.new_variable()], inline=False)
            eng.push_sync(_draw(res, out), mx.cpu(), [], [res.var], inline=False)
        eng.wait_for_all()
        runs.append(np.stack(out))
    np.testing.assert_array_equal(runs[0], runs[1])
    out = []
    mx.random.seed(8)
    eng.push_sync(_draw(res, out), mx.cpu(), [], [res.var])
    eng.wait_for_all()
    assert not np.array_equal(out[0], runs[0][0])


def test_seed_per_context_and_parallel_random():
    eng = mx.engine.get()
    mgr = ResourceManager.get()
    r0 = mgr.request(mx.cpu(0), ResourceRequest.RANDOM)
    r1 = mgr.request(mx.cpu(1), ResourceRequest.RANDOM)
    mx.random.seed(3)
    a, b = [], []
    eng.push_sync(_draw(r0, a), mx.cpu(0), [], [r0.var])
    eng.push_sync(_draw(r1, b), mx.cpu(1), [], [r1.var])
    eng.wait_for_all()
    assert not np.array_equal(a[0], b[0])  # distinct streams per device
    par = mgr.request(mx.cpu(), ResourceRequest.PARALLEL_RANDOM)
    gens = par.get_parallel_random()
    assert len(gens) >= 1 and all(isinstance(g, np.random.Generator) for g in gens)
    with pytest.raises(mx.MXNetError):
        par.get_random()
    with pytest.raises(mx.MXNetError, match="integer"):
        mx.random.seed("x")


def test_temp_space_round_robin_and_serialised():
    mgr = ResourceManager.get()
    ctx = mx.cpu(3)
    spaces = [mgr.request(ctx, ResourceRequest.TEMP_SPACE) for _ in range(8)]
    assert len({id(s) for s in spaces}) == 4  # MXNET_CPU_TEMP_COPY default
    res = spaces[0]
    eng = mx.engine.get()
    active = []
    overlap = []

    def use(rctx):
        buf = res.get_space((16, 16), "float64")
        assert buf.shape == (16, 16) and buf.dtype == np.float64
        active.append(1)
        overlap.append(len(active))
        buf[:] = 1
        active.pop()

    for _ in range(20):
        eng.push_sync(use, ctx, [], [res.var], inline=False)
    eng.wait_for_all()
    assert max(overlap) == 1


def test_context_basics_and_task_scoping():
    assert mx.current_context() == mx.cpu(0)
    assert mx.gpu(2) == mx.Context("gpu", 2) and hash(mx.gpu(2)) == hash(mx.Context(2, 2))
    with pytest.raises(mx.MXNetError, match="unknown device type"):
        mx.Context("tpu")
    with pytest.raises(AttributeError):
        mx.cpu().device_id = 3

    async def in_task(ctx, seen):
        with ctx:
            await asyncio.sleep(0.01)
            seen.append(mx.current_context())

    async def main():
        seen = []
        await asyncio.gather(in_task(mx.cpu(1), seen), in_task(mx.gpu(0), seen))
        return seen, mx.current_context()

    seen, after = asyncio.run(main())
    assert sorted(map(str, seen)) == ["cpu(1)", "gpu(0)"] and after == mx.cpu(0)

    seen_thread = []
    with mx.cpu(4):
        t = threading.Thread(target=lambda: seen_thread.append(mx.current_context()))
        t.start()
        t.join()
        assert mx.current_context() == mx.cpu(4)
    assert seen_thread == [mx.cpu(0)]  # scopes are per thread


@threaded_only
def test_profiler_writes_chrome_trace(tmp_path):
    path = tmp_path / "trace.json"
    eng = mx.engine.get()
    mx.profiler.set_config(filename=str(path))
    mx.profiler.set_state("run")
    v = eng.new_variable()
    eng.push_sync(lambda r: sum(range(10000)), mx.cpu(), [], [v], name="summing", inline=False)

    async def coro(rctx):
        await asyncio.sleep(0.001)

    eng.push_async(coro, mx.cpu(), [v], [], name="waiting")
    eng.wait_for_all()
    mx.profiler.set_state("stop")
    mx.profiler.dump()
    trace = json.loads(path.read_text())
    events = {e["name"]: e for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"summing", "waiting"} <= set(events)
    assert events["summing"]["args"]["ctx"] == "cpu(0)"
    assert events["summing"]["args"]["worker"].startswith("mxasync-worker")
    assert events["waiting"]["dur"] >= 1000 * 0.5
    with pytest.raises(mx.MXNetError):
        mx.profiler.set_state("go")
