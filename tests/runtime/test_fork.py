"""A forked child starts with a clean engine, whatever its parent was doing (os.fork, multiprocessing).

Each case runs in a fresh interpreter.  The parent's pending work waits on a gate
that opens only after the fork returned, and MXASYNC_EXIT_TIMEOUT is large, so a
fork that waited for pending work would hang (the subprocess timeout fails the
test); a child whose wait hung is ended by its own alarm.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

PRELUDE = """
import os, signal, sys, threading
import numpy as np
import mxasync as mx

eng = mx.engine.get()
gate = threading.Event()

def blocked(rctx):
    gate.wait()

def hold(dst, src=None):
    # a write of dst that cannot finish before the gate opens, pushed from another thread
    # (under MXASYNC_ENGINE_TYPE=naive the push itself runs it and blocks that thread)
    reads = [src._chunk.var] if src is not None else []
    t = threading.Thread(target=eng.push_sync, args=(blocked, mx.cpu(), reads, [dst._chunk.var]),
                         kwargs={"inline": False, "name": "blocked"}, daemon=True)
    t.start()
    while not dst._chunk.var.pending:
        pass
"""


def _run(code: str, timeout: float = 90):
    env = dict(os.environ, MXASYNC_EXIT_TIMEOUT="600")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def test_fork_with_pending_work_neither_waits_nor_hangs_the_child():
    rc, out = _run("""
        a = mx.nd.ones((3,))
        a.wait_to_read()
        b = mx.nd.zeros((3,))
        hold(b, a)          # a is read, b written, by an op that never ends before the fork
        c = b + 1           # queued behind it
        pid = os.fork()
        if pid == 0:
            signal.alarm(30)
            mx.nd.waitall()  # nothing of the parent's is pending here
            report = [a.asnumpy().tolist(), (a * 3).asnumpy().tolist()]
            for arr in (c, b):
                try:
                    arr.asnumpy()
                    report.append("no error")
                except mx.MXNetError as exc:
                    report.append("forked" in str(exc) and "pending in the parent" in str(exc))
            d = mx.nd.array(np.arange(4.0)) * 2
            report.append(d.asnumpy().tolist())
            mx.nd.waitall()
            print("child", report, flush=True)
            os._exit(0)
        gate.set()
        _, status = os.waitpid(pid, 0)
        print("parent", c.asnumpy().tolist(), os.waitstatus_to_exitcode(status))
    """)
    assert rc == 0, out
    # each array the fork left unknown raises at its own wait: c (computed from b), then b itself
    assert "child [[1.0, 1.0, 1.0], [3.0, 3.0, 3.0], True, True, [0.0, 2.0, 4.0, 6.0]]" in out, out
    assert "parent [1.0, 1.0, 1.0] 0" in out, out


def test_multiprocessing_fork_while_a_thread_keeps_pushing():
    rc, out = _run("""
        import multiprocessing as mp

        stop = threading.Event()

        def pusher():
            x = mx.nd.ones((32, 32))
            while not stop.is_set():
                x = mx.nd.dot(x, x) / 32
                x.wait_to_read() if np.random.rand() < 0.1 else None

        def child(q):
            mx.nd.waitall()
            a = mx.nd.arange(6).reshape((2, 3))
            q.put(float((a * 2).sum().asscalar()))

        held = mx.nd.zeros((2,))
        hold(held)
        threads = [threading.Thread(target=pusher) for _ in range(2)]
        for t in threads:
            t.start()
        ctx = mp.get_context("fork")
        got, codes = [], []
        for _ in range(4):
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            got.append(q.get(timeout=60))
            p.join(60)
            codes.append(p.exitcode)
        stop.set()
        gate.set()
        for t in threads:
            t.join()
        mx.nd.waitall()
        print("results", got, codes)
    """)
    assert rc == 0, out
    assert "results [30.0, 30.0, 30.0, 30.0] [0, 0, 0, 0]" in out, out


def test_fork_in_a_child_of_a_child_and_the_engine_loop():
    """A coroutine op pending at the fork, and a grandchild: each generation starts clean."""
    rc, out = _run("""
        import asyncio

        async def later(rctx):
            await asyncio.sleep(3600)

        v = eng.new_variable()
        # from another thread: under MXASYNC_ENGINE_TYPE=naive the push waits for the op
        threading.Thread(target=eng.push_async, args=(later, mx.cpu(), [], [v]), daemon=True).start()
        while not v.pending:
            pass
        codes = []
        pid = os.fork()
        if pid == 0:
            signal.alarm(30)
            async def fine(rctx):
                await asyncio.sleep(0)
            w = eng.new_variable()
            eng.push_async(fine, mx.cpu(), [], [w])
            eng.wait_for_var(w)
            pid2 = os.fork()
            if pid2 == 0:
                signal.alarm(30)
                mx.nd.waitall()
                print("grandchild", (mx.nd.ones((2,)) + 1).asnumpy().tolist(), flush=True)
                os._exit(0)
            _, status = os.waitpid(pid2, 0)
            mx.nd.waitall()
            print("child", os.waitstatus_to_exitcode(status), flush=True)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("parent", os.waitstatus_to_exitcode(status))
        os._exit(0)  # the parent's own coroutine op never ends: skip the bounded exit drain
    """)
    assert rc == 0, out
    assert "grandchild [2.0, 2.0]" in out and "child 0" in out and "parent 0" in out, out
