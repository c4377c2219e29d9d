"""``Engine.push_kernel``: the NDArray operators' fast path runs a pure kernel at once when its vars
are free, and otherwise behaves as any pushed op (order, errors, completion)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxasync as mx
from mxasync.runtime.engine.naive import NaiveEngine

CPU = mx.cpu()


def _add(x, y, out):
    np.add(x, y, out=out)


def test_free_vars_run_at_once_and_count_the_write(engine):
    a, b, out = np.ones(4), np.full(4, 2.0), np.zeros(4)
    va, vb, vo = engine.new_variable(), engine.new_variable(), engine.new_variable()
    engine.push_kernel(_add, (a, b, out), CPU, [va, vb], [vo], "add")
    assert out.tolist() == [3.0] * 4  # ran before push_kernel returned
    assert vo.version == 1 and not vo.pending and not va.pending


def test_a_pending_writer_orders_the_kernel_after_it(engine):
    if isinstance(engine, NaiveEngine):
        pytest.skip("the naive engine runs every op at its push: no writer is ever pending")
    a, b, out = np.ones(4), np.ones(4), np.zeros(4)
    va, vb, vo = engine.new_variable(), engine.new_variable(), engine.new_variable()
    gate = threading.Event()

    def slow_write(rctx):
        gate.wait(10)
        a[:] = 5.0

    engine.push_sync(slow_write, CPU, [], [va], inline=False)
    engine.push_kernel(_add, (a, b, out), CPU, [va, vb], [vo], "add")
    assert out.tolist() == [0.0] * 4  # queued behind the writer, not run
    gate.set()
    engine.wait_for_var(vo)
    assert out.tolist() == [6.0] * 4 and vo.version == 1


def test_a_failing_kernel_taints_its_output_and_leaves_the_engine_working(engine):
    va, vo = engine.new_variable(), engine.new_variable()

    def bad(x):
        raise ValueError("kernel broke")

    engine.push_kernel(bad, (1,), CPU, [va], [vo], "bad_kernel")
    with pytest.raises(mx.MXNetError, match="kernel broke"):
        engine.wait_for_var(vo)
    out = np.zeros(2)
    engine.push_kernel(_add, (np.ones(2), np.ones(2), out), CPU, [va], [vo], "add")  # the lock was given back
    engine.wait_for_var(vo)
    assert out.tolist() == [2.0, 2.0] and not va.pending


def test_a_base_exception_still_completes_the_op(engine):
    va, vo = engine.new_variable(), engine.new_variable()

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine.push_kernel(interrupted, (), CPU, [va], [vo], "interrupted")
    assert not vo.pending and not va.pending
    with pytest.raises(mx.MXNetError):
        engine.wait_for_var(vo)


def test_ndarray_operators_take_it_and_stay_right():
    a = mx.nd.array([1.0, 2.0, 3.0, 4.0])
    b = mx.nd.array([10.0, 20.0, 30.0, 40.0])
    c = a + b
    d = c * 2
    e = d - a
    assert e.asnumpy().tolist() == [21.0, 42.0, 63.0, 84.0]
