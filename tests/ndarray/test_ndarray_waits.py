"""NDArray sync points under the engine's wait rule: ``wait_to_read``, ``asnumpy`` and ``await x`` wait
for pending writes only; ``wait_to_write`` also for pending reads (a read op is held on an event)."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np

import mxasync as mx


class _HeldRead:
    """An engine op reading ``x`` held until :meth:`release`; pushed from its own thread (NaiveEngine runs it there)."""

    def __init__(self, x):
        self.started, self.go, self.finished = threading.Event(), threading.Event(), []
        eng = mx.engine.get()

        def read(rctx):
            self.started.set()
            self.go.wait(60)
            self.finished.append(True)

        self.pusher = threading.Thread(target=eng.push_sync, args=(read, x.context, [x._chunk.var], []),
                                       kwargs={"name": "held_read", "inline": False})
        self.pusher.start()
        assert self.started.wait(60)

    def release(self):
        self.go.set()
        self.pusher.join(60)


def _in_thread(fn):
    """Run ``fn`` in a thread; return what it returned, or 'blocked' if it is still waiting (the held read)."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(60)
    return out[0] if out else "blocked"


def test_reads_do_not_wait_for_pending_reads():
    x = mx.nd.arange(4)
    x.wait_to_read()
    held = _HeldRead(x)
    try:
        assert _in_thread(lambda: (x.wait_to_read(), bool(held.finished))[1]) is False
        got = _in_thread(lambda: x.asnumpy())
        assert not isinstance(got, str)
        np.testing.assert_array_equal(got, np.arange(4))
        assert _in_thread(lambda: (asyncio.run(x.wait_to_read_async()), bool(held.finished))[1]) is False

        async def awaited():
            await x
            return bool(held.finished)

        assert _in_thread(lambda: asyncio.run(awaited())) is False
        assert not held.finished
    finally:
        held.release()


def test_wait_to_write_waits_for_pending_reads():
    x = mx.nd.arange(4)
    x.wait_to_read()
    held = _HeldRead(x)
    seen: list = []

    def release_when_queued():
        while not x._chunk.var._queue and not seen:
            time.sleep(0.001)
        held.go.set()

    releaser = threading.Thread(target=release_when_queued)
    releaser.start()
    try:
        x.wait_to_write()
        seen.append(bool(held.finished))
    finally:
        seen.append("done")
        releaser.join(60)
        held.release()
    assert seen[0] is True
