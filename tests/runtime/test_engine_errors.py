"""Error propagation, MXNet's test_exc_handling rules at the engine level."""

from __future__ import annotations

import asyncio
import threading

import pytest

import mxasync as mx

CPU = mx.cpu()


def _fail(rctx):
    raise ValueError("bad value 42")


def test_error_is_stored_and_raised_at_wait_with_op_name(engine):
    v = engine.new_variable()
    engine.push_sync(_fail, CPU, [], [v], name="my_failing_op")  # nothing raised at push
    with pytest.raises(mx.MXNetError, match=r"my_failing_op.*ValueError: bad value 42") as info:
        engine.wait_for_var(v)
    assert isinstance(info.value.__cause__, ValueError)
    engine.wait_for_var(v)  # surfaced once: the second wait is clean
    engine.wait_for_all()


def test_dependents_are_skipped_and_inherit(engine):
    a, b, c, free = (engine.new_variable() for _ in range(4))
    ran = []
    engine.push_sync(_fail, CPU, [], [a], name="producer")
    engine.push_sync(lambda r: ran.append("reader"), CPU, [a], [b], name="reader")
    engine.push_sync(lambda r: ran.append("grandchild"), CPU, [b], [c], name="grandchild")
    engine.push_sync(lambda r: ran.append("independent"), CPU, [], [free], name="independent")
    with pytest.raises(mx.MXNetError, match="producer"):
        engine.wait_for_var(c)  # the error reached c through b, naming the op that failed
    engine.wait_for_var(free)  # (it may still be queued: the waiting thread runs what it waits for first)
    assert ran == ["independent"]
    # every var the failure left unwritten raises at its own first wait, once (per var, not per family)
    for v in (a, b):
        with pytest.raises(mx.MXNetError, match="producer"):
            engine.wait_for_var(v)
        engine.wait_for_var(v)
    engine.wait_for_all()  # reported: wait_for_all has nothing left
    # a read of a var that was never written is still spoiled, and its output raises in turn
    engine.push_sync(lambda r: ran.append("late reader"), CPU, [a], [b], name="late_reader")
    with pytest.raises(mx.MXNetError, match="producer"):
        engine.wait_for_var(b)
    # a write makes a var usable again (the record was reported, so writes run)
    engine.push_sync(lambda r: ran.append("rewrite"), CPU, [], [a], name="rewrite")
    engine.push_sync(lambda r: ran.append("again"), CPU, [a], [b])
    engine.wait_for_var(b)
    assert ran[1:] == ["rewrite", "again"]


def test_wait_for_all_raises_first_unreported_then_is_clean(engine):
    v1, v2 = engine.new_variable(), engine.new_variable()
    engine.push_sync(_fail, CPU, [], [v1], name="first")
    engine.push_sync(lambda r: (_ for _ in ()).throw(KeyError("k")), CPU, [], [v2], name="second")
    with pytest.raises(mx.MXNetError, match="first"):
        engine.wait_for_all()
    engine.wait_for_all()
    engine.wait_for_var(v2)  # the second error was cleared by the waitall too


def test_error_from_each_op_style(engine):
    async def coro_fail(rctx):
        await asyncio.sleep(0)
        raise RuntimeError("coro boom")

    def callback_fail(rctx, on_complete):
        threading.Thread(target=lambda: on_complete(OSError("cb boom"))).start()

    def callback_raises(rctx, on_complete):
        raise TypeError("raised before on_complete")

    for fn, pat in [(coro_fail, "coro boom"), (callback_fail, "cb boom"), (callback_raises, "raised before")]:
        v = engine.new_variable()
        engine.push_async(fn, CPU, [], [v], name="styled")
        with pytest.raises(mx.MXNetError, match=pat):
            engine.wait_for_var(v)


def test_failed_op_never_kills_a_worker(threaded):
    eng = threaded
    vs = [eng.new_variable() for _ in range(50)]
    for v in vs:
        eng.push_sync(_fail, CPU, [], [v], inline=False)
    with pytest.raises(mx.MXNetError):
        eng.wait_for_all()
    ok = eng.new_variable()
    out = []
    for _ in range(10):
        eng.push_sync(lambda r: out.append(1), CPU, [], [ok], inline=False)
    eng.wait_for_var(ok)
    assert len(out) == 10


def test_delete_runs_even_when_var_is_tainted(engine):
    v = engine.new_variable()
    freed = []
    engine.push_sync(_fail, CPU, [], [v])
    engine.delete_variable(lambda r: freed.append(True), CPU, v)
    with pytest.raises(mx.MXNetError):
        engine.wait_for_all()
    assert freed == [True]


def test_on_complete_twice_is_an_error(engine):
    v = engine.new_variable()
    errors = []

    def twice(rctx, on_complete):
        on_complete()
        try:
            on_complete()
        except mx.MXNetError as e:
            errors.append(str(e))

    engine.push_async(twice, CPU, [], [v], name="twice")
    engine.wait_for_all()
    assert errors and "twice" in errors[0]


def test_blocking_wait_inside_an_op_is_refused(threaded):
    eng = threaded
    v = eng.new_variable()
    seen = []

    def waits(rctx):
        try:
            eng.wait_for_all()
        except mx.MXNetError as e:
            seen.append(str(e))

    eng.push_sync(waits, CPU, [], [v], inline=False)
    eng.wait_for_var(v)
    assert seen and "inside a running engine op" in seen[0]


@pytest.mark.asyncio
async def test_every_await_of_a_failed_var_raises():
    eng = mx.engine.get()
    v = eng.new_variable()
    eng.push_sync(_fail, CPU, [], [v], name="async_fail")
    for _ in range(2):  # as awaiting a failed future: every await raises
        with pytest.raises(mx.MXNetError, match="async_fail"):
            await v
    await eng.wait_for_all_async()  # raised at a wait: nothing pending
    eng.push_sync(lambda r: None, CPU, [], [v], name="rewrite")
    await v  # written since: clean
