"""Profiler scopes (MXNet's custom-op scope): ops pushed inside ``mx.profiler.scope('MyOp')`` are profiled as
``MyOp::<op>`` in the 'Custom Operator' domain; the tag is added at push only while the profiler runs."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import mxasync as mx
from mxasync.runtime.profiler import current_scope, scope

CPU = mx.cpu()


@pytest.fixture
def running(tmp_path):
    mx.profiler.set_config(filename=str(tmp_path / "trace.json"), aggregate_stats=True)
    mx.profiler.dumps(reset=True)
    mx.profiler.set_state("run")
    yield tmp_path / "trace.json"
    mx.profiler.set_state("stop")
    mx.profiler.set_config()
    mx.profiler.dumps(reset=True)


def _stats():
    mx.nd.waitall()
    return json.loads(mx.profiler.dumps(format="json"))["Time"]


def test_ops_pushed_in_a_scope_are_named_with_it(running):
    eng = mx.engine.get()
    v, w, u = eng.new_variable(), eng.new_variable(), eng.new_variable()
    with scope("MyOp"):
        eng.push_sync(lambda r: None, CPU, [], [v], name="inner", inline=True)
        eng.push_async(lambda r, done: done(), CPU, [], [w], name="callback")
        with scope("_backward_MyOp"):
            eng.push_sync(lambda r: None, CPU, [], [u], name="nested", inline=False)
        assert current_scope() == "MyOp"
    assert current_scope() is None
    eng.push_sync(lambda r: None, CPU, [], [v], name="outside", inline=True)
    t = _stats()
    assert {"MyOp::inner", "MyOp::callback", "_backward_MyOp::nested"} <= set(t["Custom Operator"])
    assert "outside" in t["operator"] and "inner" not in t["operator"]
    mx.profiler.dump(False)
    names = {e["name"] for e in json.loads(running.read_text())["traceEvents"] if e.get("ph") == "X"}
    assert {"MyOp::inner", "outside"} <= names


def test_a_scope_belongs_to_its_thread(running):
    eng = mx.engine.get()
    inside, go = threading.Event(), threading.Event()

    def other():
        with scope("OtherThread"):
            inside.set()
            go.wait(30)

    t = threading.Thread(target=other)
    t.start()
    try:
        assert inside.wait(30)
        v = eng.new_variable()
        eng.push_sync(lambda r: None, CPU, [], [v], name="mine", inline=True)
    finally:
        go.set()
        t.join(30)
    assert "mine" in _stats()["operator"]


def test_no_tagging_without_the_profiler():
    eng = mx.engine.get()
    mx.profiler.set_state("run")
    assert eng._submit == eng._submit_in_scope  # the tagging submit is installed while profiling
    mx.profiler.set_state("stop")
    assert eng._submit == eng._grants.submit  # and gone afterwards: the push path is the plain one


def test_creation_ops_are_named_as_mxnet(running):
    a = mx.nd.zeros((2, 3))
    b = mx.nd.ones((2,), dtype="int32")
    c = mx.nd.full((2,), 7.5)
    np.testing.assert_array_equal(a.asnumpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(b.asnumpy(), np.ones(2, np.int32))
    np.testing.assert_array_equal(c.asnumpy(), np.full(2, 7.5, np.float32))
    assert {"_zeros", "_ones", "_full"} <= set(_stats()["operator"])
