"""Who gets an error when it surfaces: every await; every blocking wait already waiting.

Awaiting a failed var raises every time, as awaiting a failed future does.  Blocking waits keep
MXNet's surface-once rule per var: the first raises, and so does every one already waiting then
(two threads blocked on one failed var both raise); one that begins later on that var is clean.
And the awaitables refuse other event loops (trio) with one line instead of asyncio's bare
``no running event loop``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import types

import pytest

import mxasync as mx

CPU = mx.cpu()


def _held_op(engine, var):
    """Push a callback op on ``var`` that completes when the returned function is called."""
    done = []
    engine.push_async(lambda rctx, on_complete: done.append(on_complete), CPU, [], [var], name="held_fail")
    return lambda exc=None: done[0](exc)


@pytest.mark.asyncio
async def test_every_awaiter_already_waiting_gets_the_error(threaded):
    v = threaded.new_variable()
    finish = _held_op(threaded, v)
    waiters = [asyncio.ensure_future(threaded.wait_for_var_async(v)) for _ in range(3)]
    await asyncio.sleep(0)  # each task runs up to its await: all three are waiting
    finish(ValueError("boom"))
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert all(isinstance(r, mx.MXNetError) and "held_fail" in str(r) for r in results), results
    with pytest.raises(mx.MXNetError, match="held_fail"):
        await threaded.wait_for_var_async(v)  # an await that begins afterwards raises too
    threaded.wait_for_var(v)  # a blocking wait after one raised: MXNet's rule, clean
    threaded.wait_for_all()


def test_every_thread_already_waiting_gets_the_error(threaded):
    v = threaded.new_variable()
    finish = _held_op(threaded, v)
    started = threading.Barrier(3)
    outcome = []

    def waiter():
        started.wait()
        try:
            threaded.wait_to_read(v)
            outcome.append(None)
        except mx.MXNetError as exc:
            outcome.append(exc)

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    started.wait()
    while len(v._queue) < 2:  # both wait markers queued on v
        threading.Event().wait(0.001)
    finish(ValueError("boom"))
    for t in threads:
        t.join(30)
    assert len(outcome) == 2 and all(isinstance(o, mx.MXNetError) for o in outcome), outcome
    threaded.wait_to_read(v)  # later: clean
    threaded.wait_for_all()


@pytest.mark.asyncio
async def test_gathered_ndarray_awaits_all_raise():
    eng = mx.engine.get()
    if eng.type == "NaiveEngine":
        pytest.skip("the naive engine finishes each op inside its push: nobody is waiting yet")
    a = mx.nd.ones((2, 2))
    finish = _held_op(eng, a._chunk.var)  # keeps a busy, so the failing write and its reader queue
    mx.nd.random.normal(0, -1, (2, 2), out=a)  # fails when it runs
    c = a + 1

    async def read():
        await c
        return c.asnumpy()

    tasks = [asyncio.ensure_future(read()) for _ in range(2)]
    await asyncio.sleep(0)
    finish()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, mx.MXNetError) for r in results), results
    mx.nd.waitall()


def test_later_waits_stay_clean_after_the_error_surfaced(engine):
    v = engine.new_variable()
    engine.push_sync(lambda rctx: 1 / 0, CPU, [], [v], name="div")
    with pytest.raises(mx.MXNetError, match="div"):
        engine.wait_for_var(v)
    engine.wait_for_var(v)
    engine.wait_for_all()


def test_awaiting_outside_asyncio_fails_with_one_clear_line(engine, monkeypatch):
    v = engine.new_variable()
    fake_sniffio = types.SimpleNamespace(current_async_library=lambda: "trio")
    monkeypatch.setitem(sys.modules, "sniffio", fake_sniffio)
    coro = engine.wait_for_var_async(v)
    with pytest.raises(mx.MXNetError, match=r"need asyncio .*called under trio") as info:
        coro.send(None)  # driven by hand, as a foreign event loop would: no asyncio loop runs
    assert "\n" not in str(info.value)
    all_coro = engine.wait_for_all_async()
    with pytest.raises(mx.MXNetError, match="called under trio"):
        all_coro.send(None)
