"""Bounded without being slow: the push throttle and the CPU pool's cap (issue 25, items 4 and 10)."""

from __future__ import annotations

import threading
import time

import mxasync as mx
from mxasync.runtime.storage import CPUStorage, Storage

CPU = mx.cpu()
MIB = 1 << 20


def test_a_chain_stuck_behind_a_held_op_is_pushed_without_a_wait_per_push(threaded, monkeypatch):
    """The pending ops wait for an op this thread completes later: waiting on them cannot help.
    The throttle used to sleep up to 2 ms on every push past the lead (100k pushes: minutes)."""
    me = threading.get_ident()
    sleeps = []
    real_sleep = time.sleep

    def counting_sleep(seconds):
        if threading.get_ident() == me:
            sleeps.append(seconds)
        real_sleep(seconds)

    v = threaded.new_variable()
    done = []
    threaded.push_async(lambda rctx, on_complete: done.append(on_complete), CPU, [], [v], name="held")
    lead = getattr(threaded, "_placement", threaded).yield_above  # (main kept it on the engine)
    n = 4 * lead
    monkeypatch.setattr(time, "sleep", counting_sleep)
    try:
        for _ in range(n):
            threaded.push_sync(lambda rctx: None, CPU, [], [v], name="link")
    finally:
        monkeypatch.setattr(time, "sleep", real_sleep)
        done[0]()
    threaded.wait_for_var(v)
    assert v.version == n + 1
    assert len(sleeps) < (n - lead) // 2, len(sleeps)  # not one sleep (or more) per push past the lead


def test_a_dependent_chain_of_big_arrays_keeps_memory_bounded():
    ctx = mx.cpu(5)
    st = Storage.get(ctx)
    a = mx.nd.zeros((512, 512), ctx=ctx)  # 1 MiB
    b = mx.nd.ones((512, 512), ctx=ctx)
    for _ in range(600):
        a = a + b
    assert float(a.asnumpy()[0, 0]) == 600.0
    eng = mx.engine.get()
    placement = getattr(eng, "_placement", eng)
    assert st.stats()["peak"] <= (placement.yield_above + placement.max_backlog + eng.num_workers + 8) * MIB


def test_the_cpu_pool_gives_back_what_exceeds_its_cap(monkeypatch):
    monkeypatch.setenv("MXASYNC_CPU_POOL_MB", "4")
    st = CPUStorage(mx.cpu(11))  # a private pool, made under the cap
    handles = [st.alloc(MIB) for _ in range(16)]  # a transient peak of 16 MiB
    for h in handles:
        st.free(h)
    assert st.stats()["in_use"] == 0
    assert st.stats()["pooled"] <= 4 * MIB  # the rest went back to the system
    again = [st.alloc(MIB) for _ in range(4)]
    assert st.stats()["pool_hits"] == 4  # what it kept is reused
    for h in again:
        st.free(h)


def test_the_cap_makes_room_for_new_sizes_by_dropping_old_ones(monkeypatch):
    monkeypatch.setenv("MXASYNC_CPU_POOL_MB", "4")
    st = CPUStorage(mx.cpu(12))
    old = [st.alloc(MIB) for _ in range(4)]
    for h in old:
        st.free(h)
    new = st.alloc(3 * MIB)
    st.free(new)  # fits only once old blocks go
    assert st.stats()["pooled"] <= 4 * MIB
    st.alloc(3 * MIB)
    assert st.stats()["pool_hits"] == 1

