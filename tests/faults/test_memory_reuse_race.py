"""Issue 25, item 5a, the race half: a dead array's pooled block must not reach a new array while a
pushed op still reads or writes it. Two ways it did, each driven here into the one interleaving
that shows it (an op held on a var, a probe at the instant of a grant), so nothing depends on timing:

* an op collected in an open ``engine.bulk`` segment is pushed as far as the user is concerned, but
  the engine saw it only at the flush, whose push first ran the dead array's release: the block went
  back to the pool with nothing pending on its var, and the next array of its size was written
  before the segment read it;
* ``VarHandle.pending``, read without the engine's lock by that release, could see a queued op in
  neither place while another thread granted it (taken off the queue, not yet granted).
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
import pytest

import mxasync as mx
from mxasync.runtime.engine import Engine

pytestmark = pytest.mark.fault

_SHAPE = (256, 256)  # 256 KiB of float32: a pooled block


def _held(eng, var, name):
    """Push an op writing ``var`` that runs until the returned event is set (a worker holds it)."""
    go = threading.Event()
    eng.push_sync(lambda rctx: go.wait(30), mx.cpu(), [], [var], name=name, inline=False)
    return go


def test_a_bulked_read_of_a_dead_array_keeps_its_block_from_new_arrays():
    eng = Engine.get()
    gate = mx.nd.zeros(_SHAPE)
    x = mx.nd.ones(_SHAPE)
    mx.nd.waitall()
    go = _held(eng, gate._chunk.var, "hold_gate")
    try:
        with eng.bulk(8):
            y = x + gate  # collected; the segment then waits behind the held op on ``gate``
            del x
        z = mx.nd.full(_SHAPE, 7.0)  # same size: it must not get x's block while y's op is pending
        z.wait_to_read()
    finally:
        go.set()
    np.testing.assert_array_equal(y.asnumpy(), np.ones(_SHAPE, np.float32))
    np.testing.assert_array_equal(z.asnumpy(), np.full(_SHAPE, 7.0, np.float32))


class _Probe(deque):
    """A var's queue that reports what an unlocked reader of ``pending`` sees as each op leaves it."""

    def __init__(self, items, var, seen):
        super().__init__(items)
        self.var, self.seen = var, seen

    def popleft(self):
        item = super().popleft()
        self.seen.append(self.var.pending)  # the op just left the queue: it must count as granted already
        return item


@pytest.mark.parametrize("queued_write", [False, True], ids=["queued_read", "queued_write"])
def test_pending_never_reads_false_while_an_op_is_granted(queued_write):
    eng = Engine.get()
    var = eng.new_variable(name="probed")
    go = _held(eng, var, "hold_var")
    ran = threading.Event()

    def queued(rctx):
        ran.set()

    eng.push_sync(queued, mx.cpu(), [] if queued_write else [var], [var] if queued_write else [],
                  name="queued", inline=False)
    seen: list = []
    with eng._lock:  # swap the queue in while nothing is granted from it
        assert len(var._queue) == 1
        var._queue = _Probe(var._queue, var, seen)
    go.set()
    eng.wait_for_var(var)
    assert ran.is_set()
    assert seen and all(seen), "an op taken off the queue was not yet granted: pending read False"
