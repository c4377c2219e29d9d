"""NDArray core: creation, views, in-place writes, sync points, errors, memory."""

from __future__ import annotations

import gc
import pickle
import threading
import time

import numpy as np
import pytest

import mxasync as mx
from mxasync.runtime.storage import Storage


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "uint8", "int8", "int32", "int64"])
def test_creation_and_dtypes(dtype):
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype=dtype)
    assert a.dtype == np.dtype(dtype).type and a.shape == (2, 3) and a.size == 6 and a.ndim == 2
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3).astype(dtype))
    assert mx.nd.zeros((2, 2), dtype=dtype).asnumpy().sum() == 0
    assert mx.nd.ones((3,), dtype=dtype).asnumpy().tolist() == [1, 1, 1]
    assert mx.nd.full((2,), 5, dtype=dtype).asnumpy().tolist() == [5, 5]


def test_defaults_follow_mxnet():
    assert mx.nd.array([1, 2]).dtype == np.float32
    assert mx.nd.zeros((2,)).context == mx.cpu(0)
    with mx.cpu(1):
        assert mx.nd.ones((1,)).context == mx.cpu(1)
    np.testing.assert_array_equal(mx.nd.arange(0, 6, 2, repeat=2).asnumpy(), [0, 0, 2, 2, 4, 4])
    z = mx.nd.zeros_like(mx.nd.ones((2, 3), dtype="int32"))
    assert z.shape == (2, 3) and z.dtype == np.int32


def test_views_share_memory_and_var():
    a = mx.nd.zeros((4, 3))
    row = a[1]
    block = a[1:3]
    flat = a.reshape((12,))
    assert row.handle is a.handle and block.handle is a.handle and flat.handle is a.handle
    row[:] = 5
    block[1][2] = 9  # view of a view
    flat[0] = -1
    expected = np.zeros((4, 3))
    expected[1] = 5
    expected[2, 2] = 9
    expected[0, 0] = -1
    np.testing.assert_array_equal(a.asnumpy(), expected)


def test_advanced_indexing_copies():
    a = mx.nd.array(np.arange(12).reshape(4, 3))
    picked = a[[0, 2]]
    assert picked.handle is not a.handle
    picked[:] = 0
    np.testing.assert_array_equal(a.asnumpy(), np.arange(12).reshape(4, 3))
    np.testing.assert_array_equal(picked.asnumpy(), 0)


def test_setitem_forms():
    a = mx.nd.zeros((3, 4))
    a[:] = 1
    a[0] = mx.nd.array([1, 2, 3, 4])
    a[1, 1:3] = np.array([7, 8])
    a[2] = 3
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2, 3, 4], [1, 7, 8, 1], [3, 3, 3, 3]])
    with pytest.raises(mx.MXNetError, match="cannot fill"):
        a[0] = np.ones(5)


def test_copyto_astype_and_as_in_context():
    a = mx.nd.array([1.5, 2.5])
    b = mx.nd.zeros((2,))
    a.copyto(b)
    c = a.copyto(mx.cpu(1))
    assert c.context == mx.cpu(1)
    np.testing.assert_array_equal(b.asnumpy(), [1.5, 2.5])
    assert a.as_in_context(mx.cpu(0)) is a
    i = a.astype("int32")
    assert i.dtype == np.int32 and i.asnumpy().tolist() == [1, 2]
    with pytest.raises(mx.MXNetError, match="shape"):
        a.copyto(mx.nd.zeros((3,)))


def test_sync_points_and_asscalar():
    a = mx.nd.array([3.0])
    assert a.asscalar() == 3.0
    assert "NDArray 1 @cpu(0)" in repr(a)
    with pytest.raises(mx.MXNetError, match="exactly one element"):
        mx.nd.zeros((2,)).asscalar()


@pytest.mark.asyncio
async def test_await_and_async_twins():
    a = mx.nd.ones((1000,))
    b = a * 2
    assert (await b) is b
    np.testing.assert_array_equal(await b.asnumpy_async(), 2 * np.ones(1000))
    assert await mx.nd.array([4.0]).asscalar_async() == 4.0
    await b.wait_to_write_async()
    await mx.nd.waitall_async()


def test_failed_write_taints_until_sync_point_then_surfaces_once():
    a = mx.nd.ones((2,))
    eng = mx.engine.get()

    def fail(rctx):
        raise ValueError("broken kernel")

    eng.push_sync(fail, a.context, [], [a.handle], name="broken_op")  # nothing raised here
    b = a + 1  # spoiled by a's error, not raised either
    with pytest.raises(mx.MXNetError, match="broken_op"):
        b.asnumpy()
    b.asnumpy()  # surfaced once
    mx.nd.waitall()  # and a second waitall is clean


def test_pickle_round_trip():
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype="float64")
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.float64 and b.context == a.context
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_temporaries_keep_memory_flat():
    ctx = mx.cpu(11)
    st = Storage.get(ctx)
    x = mx.nd.ones((512, 512), ctx=ctx)  # 1 MiB: pooled
    for _ in range(2000):
        y = x * 2
        del y
    mx.nd.waitall()
    gc.collect()
    stats = st.stats()
    # 2000 live temporaries would need 2000 MiB.  The engine bounds what is in flight: a
    # pushing thread at most MXASYNC_MAX_LEAD_OPS pending ops ahead (each temporary is an op
    # plus its delete), plus the pool's backlog and what the workers run.
    eng = mx.engine.get()
    placement = eng._placement
    bound = (placement.yield_above // 2 + placement.max_backlog + eng.num_workers + 4) * (1 << 20)
    assert stats["in_use"] <= 2 * (1 << 20)
    assert stats["peak"] <= bound
    assert stats["pooled"] <= bound


def test_bulk_from_ndarray_code():
    a = mx.nd.zeros((4,))
    with mx.engine.bulk(16):
        for _ in range(10):
            a += 1
    np.testing.assert_array_equal(a.asnumpy(), 10 * np.ones(4))


def test_iteration_and_len():
    a = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    assert len(a) == 3
    assert [r.asnumpy().tolist() for r in a] == [[1, 2], [3, 4], [5, 6]]


def _slow_op(reads=(), writes=(), fn=None, delay=0.05, gate=None):
    """An engine op that sleeps (or, given ``gate``, a ``threading.Event``, waits until it is set: still
    pending however slow the machine), then runs ``fn`` (reads and writes are NDArrays)."""
    def run(rctx):
        if gate is not None:
            gate.wait(60)
        else:
            time.sleep(delay)
        if fn is not None:
            fn()

    mx.engine.get().push_sync(run, mx.cpu(), [r._chunk.var for r in reads], [w._chunk.var for w in writes],
                              name="slow_op", inline=False)


def test_dead_arrays_blocks_are_reused_by_the_next_output_after_their_ops(monkeypatch):
    """``a = a + b`` on big arrays cycles through a few parked blocks (numpy-like locality), and a
    block changes hands only after the dead array's pending ops."""
    ctx = mx.cpu(12)
    st = Storage.get(ctx)
    monkeypatch.setattr(st, "park_lag", 0)  # reuse at once, whatever the core count
    a, b = mx.nd.zeros((512, 512), ctx=ctx), mx.nd.ones((512, 512), ctx=ctx)
    for _ in range(300):
        a = a + b
    np.testing.assert_array_equal(a.asnumpy(), 300)
    assert st.stats()["peak"] <= (st.park_depth + 4) * (1 << 20)

    x = mx.nd.ones((512, 512), ctx=ctx) * 7
    seen = []
    x_data = x._data
    _slow_op(reads=[x], fn=lambda: seen.append(x_data.copy()))
    del x  # pending read: its block is parked, not freed
    y = b + 1  # same size: takes x's block, written only after the slow read
    np.testing.assert_array_equal(y.asnumpy(), 2)
    mx.nd.waitall()
    np.testing.assert_array_equal(seen[0], 7)


def test_a_failed_op_on_a_dead_array_does_not_reach_the_arrays_that_reuse_its_block(monkeypatch):
    ctx = mx.cpu(13)
    monkeypatch.setattr(Storage.get(ctx), "park_lag", 0)
    b = mx.nd.ones((512, 512), ctx=ctx)
    w = b * 3

    def fail():
        raise ValueError("boom in the dead array's op")

    _slow_op(writes=[w], fn=fail)
    del w  # its pending op will fail and taint its var
    y = b + 1  # takes w's block behind a delete of w's var: the error stays behind
    with pytest.raises(mx.MXNetError, match="boom in the dead array's op"):
        mx.nd.waitall()
    np.testing.assert_array_equal(y.asnumpy(), 2)


@pytest.mark.skipif(mx.engine.get().type == "NaiveEngine", reason="needs ops still pending (threaded engine)")
def test_a_dead_array_collected_inside_the_engine_lock_does_not_deadlock(monkeypatch):
    """A garbage-collection pass can free an NDArray on a thread that holds the engine's lock;
    its block's release must wait for a safe point instead of pushing (and deadlocking) there."""
    ctx = mx.cpu(14)
    monkeypatch.setattr(Storage.get(ctx), "park_depth", 0)  # the release must push a delete
    eng = mx.engine.get()
    x = mx.nd.ones((512, 512), ctx=ctx)
    gate = threading.Event()
    _slow_op(writes=[x], gate=gate)
    y = x * 2  # pending behind the held op, so its release needs the engine
    assert y._chunk.var.pending
    gc.disable()  # the cycle must be collected below, inside the lock, not by an automatic pass
    try:
        cycle = [y]
        cycle.append(cycle)  # y is now reachable only through a reference cycle
        del y, cycle
        done = threading.Event()

        def collect_inside_the_lock():
            with eng._lock:
                gc.collect()  # runs the chunk's __del__ on this thread, inside the lock
            done.set()

        threading.Thread(target=collect_inside_the_lock, daemon=True).start()
        assert done.wait(10), "a finalizer deadlocked on the engine's lock"
    finally:
        gc.enable()
        gate.set()
    mx.nd.waitall()  # a safe point: the deferred release ran
    assert not eng._deferred
    assert Storage.get(ctx).stats()["in_use"] <= 1 << 20  # only x is still in use


def test_setitem_shape_mismatch_names_both_shapes():
    a = mx.nd.zeros((2, 3))
    with pytest.raises(mx.MXNetError, match=r"value of shape \(3, 2\) cannot fill a slice of shape \(2, 3\)"):
        a[:] = mx.nd.ones((3, 2))
    with pytest.raises(mx.MXNetError, match=r"value of shape \(2,\) cannot fill a slice of shape \(3,\)"):
        a[0] = mx.nd.ones((2,))
    with pytest.raises(ValueError):  # MXNet raises numpy's ValueError here: both kinds of except work
        a[:] = mx.nd.ones((3, 2))
    a[:] = mx.nd.ones((1, 3))  # broadcasting to the slice is fine
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 3)))


@pytest.mark.skipif(mx.engine.get().type == "NaiveEngine", reason="needs ops still pending (threaded engine)")
def test_many_dead_arrays_released_at_once_do_not_recurse(monkeypatch):
    """Each release may push a delete, and a push drains the deferred releases: the drain must not
    nest (hundreds of dead arrays would hit the recursion limit and lose their blocks)."""
    import sys

    ctx = mx.cpu(15)
    st = Storage.get(ctx)
    monkeypatch.setattr(st, "park_depth", 0)  # every release of a pending array pushes a delete
    x = mx.nd.ones((300, 300), ctx=ctx)
    gate = threading.Event()
    _slow_op(writes=[x], gate=gate)
    try:
        ys = [x + 1 for _ in range(300)]  # pooled, all pending behind the held op
        assert ys[-1]._chunk.var.pending
        del ys
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(200)  # far below one frame per dead array
        try:
            z = x * 3  # a pooled allocation drains the 300 deferred releases
        finally:
            sys.setrecursionlimit(limit)
    finally:
        gate.set()
    mx.nd.waitall()
    assert not mx.engine.get()._deferred
    assert st.stats()["in_use"] <= 2 * 300 * 300 * 4  # only x and z: every dead block came back
    np.testing.assert_array_equal(z.asnumpy(), 3)
