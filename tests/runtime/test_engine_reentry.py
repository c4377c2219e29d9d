"""Waits made inside a running op raise instead of deadlocking, in every kind of op; a callback op
whose fn raises SystemExit (any BaseException) still completes, with the error."""

from __future__ import annotations

import asyncio
import threading

import pytest

import mxasync as mx
from mxasync.runtime.engine import Engine

CPU = mx.cpu()


def _catching(seen: list, wait):
    """Run ``wait()`` and record the MXNetError it raises (or 'returned')."""
    try:
        wait()
    except mx.MXNetError as exc:
        seen.append(str(exc))
    else:
        seen.append("returned")


@pytest.mark.parametrize("inline", [True, False, None], ids=["inline", "pool", "engine-decides"])
def test_sync_op_waiting_for_its_own_output_raises(engine, inline):
    v = engine.new_variable()
    seen: list = []
    engine.push_sync(lambda r: _catching(seen, lambda: engine.wait_for_var(v)), CPU, [], [v],
                     name="waits_for_itself", inline=inline)
    engine.wait_for_var(v)
    assert len(seen) == 1 and "inside a running engine op ('waits_for_itself')" in seen[0], seen
    assert "its own output" in seen[0]


def test_inline_fast_path_wait_for_all_raises(engine):
    v = engine.new_variable()
    engine.wait_for_all()
    seen: list = []

    def fn(rctx):
        _catching(seen, engine.wait_for_all)

    engine.push_inline(fn, CPU, [], [v], name="waits_for_all")
    engine.wait_for_all()
    assert len(seen) == 1 and "wait_for_all called inside a running engine op ('waits_for_all')" in seen[0], seen


def test_wait_for_work_queued_behind_the_op_raises(engine):
    """The op writes v; a later op reads v and writes w; waiting for w inside the first op needs it."""
    if isinstance(engine, mx.runtime.engine.naive.NaiveEngine):
        pytest.skip("NaiveEngine runs the first op inside its push: nothing is queued behind it yet")
    gate = threading.Event()
    v, w = engine.new_variable(), engine.new_variable()
    seen: list = []

    def first(rctx):
        gate.wait()
        _catching(seen, lambda: engine.wait_for_var(w))

    engine.push_sync(first, CPU, [], [v], name="first", inline=False)
    engine.push_sync(lambda r: None, CPU, [v], [w], name="second", inline=False)
    gate.set()
    engine.wait_for_var(w)
    assert len(seen) == 1 and "inside a running engine op ('first')" in seen[0], seen


def test_waits_that_need_not_block_still_work_inside_an_op(engine):
    a, v = engine.new_variable(), engine.new_variable()
    engine.push_sync(lambda r: None, CPU, [], [a], inline=True)
    engine.wait_for_var(a)
    seen: list = []
    for inline in (True, False):
        engine.push_sync(lambda r: _catching(seen, lambda: engine.wait_to_read(a)), CPU, [a], [v], inline=inline)
    engine.wait_for_var(v)
    assert seen == ["returned", "returned"]


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "pool"])
def test_wait_for_var_on_an_input_inside_the_op_raises(engine, inline):
    """wait_for_var waits for the reads too, so an op waiting for a var it reads would wait for itself."""
    a, v = engine.new_variable(), engine.new_variable()
    seen: list = []
    engine.push_sync(lambda r: _catching(seen, lambda: engine.wait_for_var(a)), CPU, [a], [v],
                     name="waits_for_its_input", inline=inline)
    engine.wait_for_var(v)
    assert len(seen) == 1 and "inside a running engine op ('waits_for_its_input')" in seen[0], seen
    assert not a.pending  # the withdrawn wait left nothing queued on the input


def test_coroutine_op_awaiting_its_input_raises(engine):
    a, v = engine.new_variable(), engine.new_variable()
    seen: list = []

    async def coro_reads(rctx):
        try:
            await a
        except mx.MXNetError as exc:
            seen.append(str(exc))
        else:
            seen.append("returned")

    engine.push_async(coro_reads, CPU, [a], [v], name="awaits_its_input")
    engine.wait_for_var(v)
    assert len(seen) == 1 and "inside a running engine op ('awaits_its_input')" in seen[0], seen


def test_callback_op_waiting_for_its_own_output_raises(engine):
    v = engine.new_variable()
    seen: list = []

    def fn(rctx, on_complete):
        _catching(seen, lambda: engine.wait_for_var(v))
        _catching(seen, engine.wait_for_all)
        on_complete()

    engine.push_async(fn, CPU, [], [v], name="callback_waits")
    engine.wait_for_var(v)
    assert len(seen) == 2 and all("inside a running engine op ('callback_waits')" in s for s in seen), seen


def test_callback_op_may_wait_after_completing(engine):
    v = engine.new_variable()
    seen: list = []

    def fn(rctx, on_complete):
        on_complete()
        _catching(seen, lambda: engine.wait_for_var(v))

    engine.push_async(fn, CPU, [], [v], name="done_then_waits")
    engine.wait_for_var(v)
    assert seen == ["returned"]


def test_coroutine_op_awaiting_itself_raises_and_unrelated_work_is_fine(engine):
    v, w, other = engine.new_variable(), engine.new_variable(), engine.new_variable()
    seen: list = []
    gate = threading.Event()
    engine.push_sync(lambda r: gate.wait(5), CPU, [], [other], name="other", inline=False) \
        if not isinstance(engine, mx.runtime.engine.naive.NaiveEngine) else None

    async def coro(rctx):
        for wait in (lambda: engine.wait_for_var_async(v), engine.wait_for_all_async):
            try:
                await wait()
            except mx.MXNetError as exc:
                seen.append(str(exc))
        gate.set()
        await engine.wait_for_var_async(other)  # another op's output: awaiting it is fine
        seen.append("awaited other")

    engine.push_async(coro, CPU, [], [v], name="coro_waits")
    engine.push_sync(lambda r: None, CPU, [v], [w], name="after")
    engine.wait_for_var(w)
    assert len(seen) == 3, seen
    assert "wait_for_var_async called inside a running engine op ('coro_waits')" in seen[0]
    assert "wait_for_all_async called inside a running engine op ('coro_waits')" in seen[1]
    assert seen[2] == "awaited other"


@pytest.mark.parametrize("exc_type", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_callback_raising_a_base_exception_still_completes(engine, exc_type):
    v, w = engine.new_variable(), engine.new_variable()

    def fn(rctx, on_complete):
        raise exc_type("bye")

    with pytest.raises(exc_type):
        engine.push_async(fn, CPU, [], [v], name="exits")  # it ran in this thread: the interrupt comes back
    engine.push_sync(lambda r: None, CPU, [v], [w], name="reader")
    with pytest.raises(mx.MXNetError, match="exits") as info:
        engine.wait_for_var(w)
    assert isinstance(info.value.__cause__, exc_type)
    engine.wait_for_all()  # nothing left pending


def test_callback_raising_system_exit_on_a_worker_completes(threaded):
    eng = threaded
    v, w = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda r: None, CPU, [], [v], inline=False, name="first")

    def fn(rctx, on_complete):
        raise SystemExit(3)

    eng.push_async(fn, CPU, [v], [w], name="exits_later")  # started by whichever thread finished 'first'
    with pytest.raises(mx.MXNetError, match="exits_later"):
        eng.wait_for_var(w)
    eng.wait_for_all()


@pytest.mark.asyncio
async def test_process_engine_from_async_code_is_unaffected():
    eng = Engine.get()
    v = eng.new_variable()
    eng.push_sync(lambda r: None, CPU, [], [v], inline=False)
    await eng.wait_for_var_async(v)
    await asyncio.sleep(0)
