"""The engine from async code, bulking, and process lifetime (exit, fork)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time

import pytest

import mxasync as mx

CPU = mx.cpu()

# what these tests check only a threaded engine does (NaiveEngine runs every op at its push)
threaded_only = pytest.mark.skipif(mx.engine.get().type == "NaiveEngine",
                                   reason="the process-wide engine is NaiveEngine (MXASYNC_ENGINE_TYPE=naive)")


@threaded_only
@pytest.mark.asyncio
async def test_await_var_keeps_the_callers_loop_running():
    eng = mx.engine.get()
    v = eng.new_variable()
    ticks = []

    async def ticker():
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.01)

    eng.push_sync(lambda r: time.sleep(0.3), CPU, [], [v], inline=False)
    task = asyncio.create_task(ticker())
    await v  # the var is awaitable
    task.cancel()
    assert len(ticks) >= 10  # the loop ran all along
    assert v.version == 1


@pytest.mark.asyncio
async def test_coroutine_ops_and_async_twins():
    eng = mx.engine.get()
    v = eng.new_variable()
    order = []

    async def step(rctx, i):
        await asyncio.sleep(0.001)
        order.append(i)

    for i in range(5):
        async def op(rctx, i=i):
            await step(rctx, i)

        eng.push_async(op, CPU, [], [v])
    await eng.wait_for_var_async(v)
    assert order == [0, 1, 2, 3, 4]
    await eng.wait_for_all_async()


@threaded_only
@pytest.mark.asyncio
async def test_cancelling_an_awaiting_task_leaves_the_engine_sound():
    eng = mx.engine.get()
    v = eng.new_variable()
    eng.push_sync(lambda r: time.sleep(0.2), CPU, [], [v], inline=False)
    waiter = asyncio.create_task(eng.wait_for_var_async(v))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await v
    eng.push_sync(lambda r: None, CPU, [v], [])
    await eng.wait_for_all_async()
    assert v.version == 1


def test_sync_wait_from_engine_loop_is_refused():
    eng = mx.engine.get()
    v = eng.new_variable()
    seen = []

    async def op(rctx):
        try:
            eng.wait_for_all()
        except mx.MXNetError as e:
            seen.append(str(e))

    eng.push_async(op, CPU, [], [v])
    eng.wait_for_var(v)
    assert seen and "event loop" in seen[0]


def test_bulk_groups_pushes(engine):
    v = engine.new_variable()
    out = []
    names = []

    class Recorder:
        profile_all = True

        def record(self, op, t0, t1):
            names.append(op.display_name())

    engine.set_profiler(Recorder())
    try:
        with engine.bulk(4):
            for i in range(10):
                engine.push_sync(lambda r, i=i: out.append(i), CPU, [], [v], name="small")
            assert len(out) < 10 or engine.type == "NaiveEngine"
        engine.wait_for_all()
    finally:
        engine.set_profiler(None)
    assert out == list(range(10))
    assert names.count("Bulk[4]") == 2 and names.count("Bulk[2]") == 1
    assert v.version == 3  # three engine ops wrote v


def test_bulk_flushes_at_wait_and_context_change(engine):
    v, w = engine.new_variable(), engine.new_variable()
    out = []
    with engine.bulk(100):
        engine.push_sync(lambda r: out.append("a"), CPU, [], [v])
        engine.wait_for_var(v)
        assert out == ["a"]
        engine.push_sync(lambda r: out.append(str(r.ctx)), mx.cpu(1), [], [w])
        engine.push_sync(lambda r: out.append(str(r.ctx)), mx.cpu(0), [], [w])
    engine.wait_for_all()
    assert out == ["a", "cpu(1)", "cpu(0)"]
    assert w.version == 2


def test_bulk_error_names_the_member(engine):
    v = engine.new_variable()
    with engine.bulk(8):
        engine.push_sync(lambda r: None, CPU, [], [v], name="fine")
        engine.push_sync(lambda r: 1 / 0, CPU, [], [v], name="divide")
    with pytest.raises(mx.MXNetError, match="divide"):
        engine.wait_for_var(v)


def _run(code: str, env_extra=None, timeout=60):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env)


@threaded_only
def test_exit_with_pending_work_does_not_hang(tmp_path):
    marker = tmp_path / "done.txt"
    code = f"""
        import asyncio, time, mxasync as mx
        eng = mx.engine.get()
        v = eng.new_variable()
        async def forever(rctx):
            await asyncio.sleep(3600)
        eng.push_async(forever, mx.cpu(), [], [eng.new_variable()])
        eng.push_sync(lambda r: (time.sleep(0.2), open({str(marker)!r}, "w").write("ok")), mx.cpu(), [], [v], inline=False)
        print("pushed")
    """
    t0 = time.perf_counter()
    proc = _run(code, {"MXASYNC_EXIT_TIMEOUT": "2"})
    assert proc.returncode == 0, proc.stderr
    assert time.perf_counter() - t0 < 20
    assert marker.read_text() == "ok"  # short pending work still finished before exit


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_gets_a_working_engine():
    """The parent does not wait for its pending writes of v; in the child they never run, so v's
    readers fail with the fork error, and fresh work runs (tests/runtime/test_fork.py has more)."""
    code = """
        import os, time, mxasync as mx
        eng = mx.engine.get()
        v = eng.new_variable()
        out = []
        for i in range(100):
            eng.push_sync(lambda r, i=i: (time.sleep(0.001), out.append(i)), mx.cpu(), [], [v], inline=False)
        pid = os.fork()
        if pid == 0:
            w, fresh = eng.new_variable(), eng.new_variable()
            res = []
            for i in range(50):
                eng.push_sync(lambda r, i=i: res.append(i), mx.cpu(), [v], [w], inline=False)
                eng.push_sync(lambda r, i=i: res.append(-i), mx.cpu(), [], [fresh], inline=False)
            eng.wait_for_all()
            try:
                eng.wait_for_var(w)
                forked = False
            except mx.MXNetError as exc:
                forked = "forked" in str(exc)
            if eng.type == "NaiveEngine":  # every op ran inside its push: nothing was pending
                os._exit(0 if not forked and len(res) == 100 and len(out) == 100 else 3)
            os._exit(0 if forked and res == [-i for i in range(50)] else 3)
        _, status = os.waitpid(pid, 0)
        eng.wait_for_all()
        print("child", os.waitstatus_to_exitcode(status), "parent", len(out))
    """
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    assert "child 0 parent 100" in proc.stdout


def test_naive_engine_from_environment():
    code = """
        import mxasync as mx, threading
        eng = mx.engine.get()
        v = eng.new_variable()
        seen = []
        eng.push_sync(lambda r: seen.append(threading.current_thread().name), mx.cpu(), [], [v], inline=False)
        print(eng.type, seen == [threading.current_thread().name])
    """
    proc = _run(code, {"MXASYNC_ENGINE_TYPE": "naive"})
    assert proc.returncode == 0, proc.stderr
    assert "NaiveEngine True" in proc.stdout


def test_cancelled_await_whose_loop_closed_does_not_stall_the_engine():
    import anyio

    eng = mx.engine.get()
    v = eng.new_variable()
    eng.push_sync(lambda r: time.sleep(0.3), CPU, [], [v], inline=False)

    async def give_up_early():
        with anyio.move_on_after(0.01):
            await eng.wait_for_var_async(v)

    anyio.run(give_up_early)  # the loop is closed before v is ready
    eng.push_sync(lambda r: None, CPU, [], [v])
    eng.wait_for_var(v)  # used to hang: the wake-up raised and ready ops were dropped
    assert v.version == 2
