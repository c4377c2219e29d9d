"""Dependency order: MXNet's engine tests, for the threaded and the naive engine."""

from __future__ import annotations

import asyncio
import random
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mxasync as mx
from mxasync.runtime import FnProperty

CPU = mx.cpu()


def _random_program(rng: random.Random, num_vars: int, num_ops: int):
    """Ops as (reads, writes, style, sleep); each writes f(reads, op id) into its writes."""
    program = []
    for i in range(num_ops):
        reads = rng.sample(range(num_vars), min(num_vars, rng.randint(0, 3)))
        writes = rng.sample(range(num_vars), min(num_vars, rng.randint(1, 2)))
        style = rng.choice(["inline", "pool", "auto", "coro", "callback"])
        sleep = rng.random() * 2e-4 if rng.random() < 0.2 else 0.0
        program.append((i, reads, writes, style, sleep))
    return program


def _sequential(program, num_vars):
    values = list(range(num_vars))
    for i, reads, writes, _, _ in program:
        acc = sum(values[r] for r in reads) * 31 + i
        for w in writes:
            values[w] = (acc + values[w]) % 1000003
    return values


def _run_on_engine(engine, program, num_vars):
    values = list(range(num_vars))
    handles = [engine.new_variable(f"v{j}") for j in range(num_vars)]

    def body(i, reads, writes):
        acc = sum(values[r] for r in reads) * 31 + i
        for w in writes:
            values[w] = (acc + values[w]) % 1000003

    for i, reads, writes, style, sleep in program:
        cv = [handles[r] for r in reads if r not in writes]
        mv = [handles[w] for w in writes]

        if style == "coro":
            async def fn(rctx, i=i, reads=reads, writes=writes, sleep=sleep):
                if sleep:
                    await asyncio.sleep(sleep)
                body(i, reads, writes)

            engine.push_async(fn, CPU, cv, mv)
        elif style == "callback":
            def fn(rctx, on_complete, i=i, reads=reads, writes=writes, sleep=sleep):
                def later():
                    if sleep:
                        time.sleep(sleep)
                    body(i, reads, writes)
                    on_complete()

                threading.Thread(target=later).start()

            engine.push_async(fn, CPU, cv, mv)
        else:
            def fn(rctx, i=i, reads=reads, writes=writes, sleep=sleep):
                if sleep:
                    time.sleep(sleep)
                body(i, reads, writes)

            inline = {"inline": True, "pool": False, "auto": None}[style]
            engine.push_sync(fn, CPU, cv, mv, name=f"op{style}", inline=inline,
                             priority=random.randint(-3, 3))
    engine.wait_for_all()
    return values


def test_random_program_matches_sequential(engine):
    rng = random.Random(1234)
    num_vars = 100
    program = _random_program(rng, num_vars, 1500)
    assert _run_on_engine(engine, program, num_vars) == _sequential(program, num_vars)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), num_vars=st.integers(1, 12), num_ops=st.integers(1, 120))
def test_random_program_hypothesis(engine, seed, num_vars, num_ops):
    program = _random_program(random.Random(seed), num_vars, num_ops)
    assert _run_on_engine(engine, program, num_vars) == _sequential(program, num_vars)


def test_versions_count_writes(engine):
    v = engine.new_variable()
    w = engine.new_variable()
    for _ in range(7):
        engine.push_sync(lambda r: None, CPU, [w], [v])
    engine.push_sync(lambda r: None, CPU, [v], [])
    engine.wait_for_all()
    assert v.version == 7
    assert w.version == 0


def test_readers_run_concurrently_writers_serialize(threaded):
    eng = threaded
    v = eng.new_variable()
    active = []
    peak = [0]
    lock = threading.Lock()

    async def read(rctx):
        with lock:
            active.append(1)
            peak[0] = max(peak[0], len(active))
        await asyncio.sleep(0.1)
        with lock:
            active.pop()

    t0 = time.perf_counter()
    for _ in range(10):
        eng.push_async(read, CPU, [v], [])
    eng.wait_for_all()
    readers = time.perf_counter() - t0
    assert peak[0] == 10
    assert readers < 0.5  # one reader takes 0.1 s; ten serialized would take 1 s

    peak[0] = 0
    t0 = time.perf_counter()
    for _ in range(10):
        eng.push_async(read, CPU, [], [v])
    eng.wait_for_all()
    writers = time.perf_counter() - t0
    assert peak[0] == 1
    assert writers >= 1.0


def test_wait_to_read_skips_pending_readers_but_wait_for_all_does_not(threaded):
    eng = threaded
    v = eng.new_variable()
    release = threading.Event()
    finished = []

    def slow_reader(rctx, on_complete):
        def later():
            release.wait(5)
            finished.append("reader")
            on_complete()

        threading.Thread(target=later).start()

    eng.push_sync(lambda r: finished.append("writer"), CPU, [], [v], inline=True)
    eng.push_async(slow_reader, CPU, [v], [])
    eng.wait_to_read(v)  # returns although the reader is still running
    assert finished == ["writer"]
    done = threading.Event()
    t = threading.Thread(target=lambda: (eng.wait_for_all(), done.set()))
    t.start()
    assert not done.wait(0.2)  # wait_for_all is held by the reader
    release.set()
    assert done.wait(5)
    assert finished == ["writer", "reader"]
    # wait_for_var (NDArray's wait_to_write) waits for readers too
    release.clear()
    eng.push_async(slow_reader, CPU, [v], [])
    threading.Timer(0.1, release.set).start()
    eng.wait_for_var(v)
    assert finished[-1] == "reader"


def test_pushes_from_many_threads(engine):
    v = engine.new_variable()
    counter = [0]

    def bump(rctx):
        counter[0] += 1

    def pusher():
        for _ in range(500):
            engine.push_sync(bump, CPU, [], [v])

    threads = [threading.Thread(target=pusher) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    engine.wait_for_var(v)
    assert counter[0] == 2000
    assert v.version == 2000


def test_priority_orders_ready_ops(threaded):
    eng = threaded
    gate = threading.Event()
    order = []
    blockers = [eng.new_variable() for _ in range(eng.num_workers)]
    for b in blockers:  # occupy every worker until the queue is filled
        eng.push_sync(lambda r: gate.wait(5), CPU, [], [b], inline=False)
    time.sleep(0.05)
    for p in [0, 5, -2, 9, 1]:
        eng.push_sync(lambda r, p=p: order.append(p), CPU, [], [eng.new_variable()], priority=p, inline=False)
    eng.push_sync(lambda r: order.append("cpu-prio"), CPU, [], [eng.new_variable()],
                  prop=FnProperty.CPU_PRIORITIZED, inline=False)
    gate.set()
    eng.wait_for_all()
    assert order[0] == "cpu-prio"
    assert order[1:] == [9, 5, 1, 0, -2]


def test_const_and_mutate_overlap_is_a_write(engine):
    v = engine.new_variable()
    seen = []
    engine.push_sync(lambda r: seen.append(1), CPU, [v, v], [v, v])
    engine.push_sync(lambda r: seen.append(2), CPU, [v], [])
    engine.wait_for_all()
    assert seen == [1, 2] and v.version == 1


def test_new_operator_push_and_delete(engine):
    v = engine.new_variable()
    hits = []

    def fn(rctx, on_complete):
        hits.append(rctx.ctx)
        on_complete()

    opr = engine.new_operator(fn, [], [v], name="counter")
    for _ in range(3):
        engine.push(opr, CPU)
    engine.delete_operator(opr)
    engine.wait_for_all()
    assert hits == [CPU] * 3 and v.version >= 3
    try:
        engine.push(opr, CPU)
    except mx.MXNetError as e:
        assert "deleted" in str(e)
    else:
        raise AssertionError("pushing a deleted operator must fail")


def test_delete_variable_runs_after_pending_ops(engine):
    v = engine.new_variable()
    log = []
    engine.push_sync(lambda r: (time.sleep(0.02), log.append("use")), CPU, [v], [], inline=False)
    engine.delete_variable(lambda r: log.append("delete"), CPU, v)
    engine.wait_for_all()
    assert log == ["use", "delete"]
    try:
        engine.push_sync(lambda r: None, CPU, [v], [])
    except mx.MXNetError as e:
        assert "deleted" in str(e)
    else:
        raise AssertionError("a deleted var must refuse pushes")


def test_bad_vars_raise_clear_error(engine):
    try:
        engine.push_sync(lambda r: None, CPU, ["not a var"], [])
    except mx.MXNetError as e:
        assert "VarHandle" in str(e)
    else:
        raise AssertionError
    v = engine.new_variable()
    engine.push_sync(lambda r: None, CPU, [], [v])
    engine.wait_for_var(v)  # the failed push left no pending state behind
    assert engine.num_pending == 0


def test_long_dependent_chain_does_not_recurse(engine):
    v = engine.new_variable()
    n = 20000
    count = [0]

    def fn(rctx, on_complete):
        count[0] += 1
        on_complete()

    for _ in range(n):
        engine.push_async(fn, CPU, [], [v])
    engine.wait_for_var(v)
    assert count[0] == n


def test_last_op_is_sole_reader(threaded):
    """Which pending reads may write in place: only the last op on a var, with nothing but writes ahead."""
    gate = threading.Event()
    v = threaded.new_variable("v")
    assert not v.last_op_is_sole_reader()  # nothing pending

    def read(rctx):
        gate.wait(5)

    threaded.push_sync(lambda rctx: gate.wait(5), CPU, [], [v], prop=FnProperty.NORMAL)  # a running writer
    threaded.push_sync(read, CPU, [v], [], prop=FnProperty.NORMAL)
    assert v.last_op_is_sole_reader()  # one read queued behind a write
    threaded.push_sync(read, CPU, [v], [], prop=FnProperty.NORMAL)
    assert not v.last_op_is_sole_reader()  # two reads would run side by side
    threaded.push_sync(lambda rctx: None, CPU, [], [v])
    assert not v.last_op_is_sole_reader()  # the last op writes
    gate.set()
    threaded.wait_for_var(v)
    started = threading.Event()

    def running_read(rctx):
        started.set()
        gate.wait(5)

    gate.clear()
    threaded.push_sync(running_read, CPU, [v], [], prop=FnProperty.NORMAL)
    assert started.wait(5)
    assert v.last_op_is_sole_reader()  # a single granted read
    gate.set()
    threaded.wait_for_var(v)
    assert not v.pending
