"""What a wait waits for (issue 14, MXNet's WaitForVar): ``wait_for_var`` and ``await var`` wait for
every op pushed so far that reads or writes the var; ``wait_to_read`` (NDArray's ``wait_to_read`` and
``asnumpy``) for the writes only.

Each test holds a read op on an event and checks, without timing anything, whether the wait returned
before the read finished.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import mxasync as mx

CPU = mx.cpu()


class BlockedReader:
    """A read op of ``var`` held on an event; pushed from a thread of its own (NaiveEngine runs it in there)."""

    def __init__(self, engine, var, fail: bool = False, mutate=()):
        self.started, self.go, self.finished = threading.Event(), threading.Event(), []

        def read(rctx):
            self.started.set()
            self.go.wait(60)
            self.finished.append(True)
            if fail:
                raise ValueError("the read failed")

        self.pusher = threading.Thread(target=engine.push_sync, args=(read, CPU, [var], list(mutate)),
                                       kwargs={"name": "blocked_read", "inline": False})
        self.pusher.start()
        assert self.started.wait(60)

    def release_once_queued(self, var, stop: threading.Event) -> threading.Thread:
        """Let the read finish once a wait is queued on ``var`` (or ``stop`` is set)."""

        def run():
            while not var._queue and not stop.is_set():
                time.sleep(0.001)
            self.go.set()

        t = threading.Thread(target=run)
        t.start()
        return t

    def close(self) -> None:
        self.go.set()
        self.pusher.join(60)


def _written(engine):
    v = engine.new_variable()
    engine.push_sync(lambda r: None, CPU, [], [v], inline=True)
    return v


def test_wait_for_var_waits_for_a_pending_read(engine):
    v = _written(engine)
    reader = BlockedReader(engine, v)
    seen: list = []
    stop = threading.Event()
    releaser = reader.release_once_queued(v, stop)
    try:
        engine.wait_for_var(v)
        seen.append(bool(reader.finished))
    finally:
        stop.set()
        releaser.join(60)
        reader.close()
    assert seen == [True]  # it returned only after the read finished


def test_await_var_waits_for_a_pending_read(engine):
    v = _written(engine)
    reader = BlockedReader(engine, v)
    stop = threading.Event()

    async def main():
        releaser = reader.release_once_queued(v, stop)
        try:
            await v
            return bool(reader.finished)
        finally:
            stop.set()
            releaser.join(60)

    try:
        assert asyncio.run(main()) is True
    finally:
        reader.close()


@pytest.mark.parametrize("how", ["sync", "async"])
def test_wait_to_read_returns_before_a_pending_read(engine, how):
    v = _written(engine)
    reader = BlockedReader(engine, v)
    seen: list = []

    def wait():
        if how == "sync":
            engine.wait_to_read(v)
        else:
            asyncio.run(engine.wait_to_read_async(v))
        seen.append(bool(reader.finished))

    waiter = threading.Thread(target=wait)
    waiter.start()
    try:
        waiter.join(60)  # a wait_to_read that waited for the read would still be blocked here
        assert not waiter.is_alive()
        assert seen == [False]
    finally:
        reader.close()
        waiter.join(60)
    engine.wait_for_var(v)
    assert reader.finished == [True]


def test_wait_for_var_for_write_false_is_wait_to_read(engine):
    v = _written(engine)
    reader = BlockedReader(engine, v)
    try:
        engine.wait_for_var(v, for_write=False)
        assert not reader.finished
    finally:
        reader.close()


def test_wait_for_var_queued_behind_a_read_orders_later_ops(engine):
    """A later writer still runs after the read, and the wait sees neither the later write nor more."""
    v = _written(engine)
    reader = BlockedReader(engine, v)
    stop = threading.Event()
    releaser = reader.release_once_queued(v, stop)
    try:
        engine.wait_for_var(v)
        version = v.version
    finally:
        stop.set()
        releaser.join(60)
        reader.close()
    assert version == 1 and not v.pending  # a wait is no write: the version is unchanged


def test_failing_read_raises_at_its_outputs_not_at_the_var_it_read(engine):
    """The error of a failed op lands on what it writes; waiting for the var it read waits, and stays clean."""
    v, out = _written(engine), engine.new_variable()
    reader = BlockedReader(engine, v, fail=True, mutate=[out])
    stop = threading.Event()
    releaser = reader.release_once_queued(v, stop)
    try:
        engine.wait_for_var(v)  # no error: the read did not write v
        assert reader.finished == [True]
    finally:
        stop.set()
        releaser.join(60)
        reader.close()
    with pytest.raises(mx.MXNetError, match="blocked_read.*the read failed"):
        engine.wait_for_var(out)
    engine.wait_for_var(out)  # surfaced once
    engine.wait_for_all()  # and wait_for_all does not raise it again


def test_wait_for_var_raises_a_failed_writers_error_once(engine):
    v = engine.new_variable()

    def fail(rctx):
        raise RuntimeError("write failed")

    engine.push_sync(fail, CPU, [], [v], name="bad_write", inline=True)
    with pytest.raises(mx.MXNetError, match="bad_write"):
        engine.wait_for_var(v)
    engine.wait_for_var(v)
    engine.wait_for_all()


def test_unready_lists_the_vars_a_wait_would_block_or_raise_for(engine):
    """One pass over many vars: those with a pending write, a pending read (only when reads count)
    or an error, in order; the others would return at once."""
    read, written, failed = _written(engine), engine.new_variable(), engine.new_variable()

    def fail(rctx):
        raise RuntimeError("write failed")

    engine.push_sync(fail, CPU, [], [failed], name="bad_write", inline=True)
    variables = [_written(engine), read, engine.new_variable(), written, failed, _written(engine)]
    assert engine.unready(variables) == [4]
    reader = BlockedReader(engine, read, mutate=[written])  # reads `read`, writes `written`
    try:
        assert engine.unready(variables) == [1, 3, 4]
        assert engine.unready(variables, for_write=False) == [3, 4]
    finally:
        reader.close()
    engine.wait_for_var(written)
    with pytest.raises(mx.MXNetError, match="bad_write"):
        engine.wait_for_var(failed)
    assert engine.unready(variables) == [4]  # still unwritten: listed, though its next wait will not raise
    assert engine.unready([]) == []
