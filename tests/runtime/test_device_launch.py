"""The launch path on an asynchronous device (issue 21), with a fake device that records what happens.

A device op whose inputs are ready launches in the thread that readies it (no worker hop);
ops on one stream record no event (the stream orders them); an event is recorded only where
something must wait: an op on another stream (a copy lane), a host op, a host read.
"""

from __future__ import annotations

import threading

import pytest

import mxasync as mx
from mxasync.runtime import FnProperty, streams
from mxasync.runtime.context import register_device_type
from mxasync.runtime.engine import Engine

DEVICE = "fakeasync"


class Event:
    def __init__(self, log, stream, n):
        self.log, self.stream, self.n = log, stream, n

    def synchronize(self):
        self.log.append(("sync", self.stream, self.n))


class RecordingDevice:
    """DeviceHooks of a fake asynchronous device: streams are names, events are numbered, all logged."""

    def __init__(self):
        self.log = []
        self.lock = threading.Lock()
        self.streams = {}

    def stream(self, ctx, lane):  # the same object for each (device, lane), as the protocol asks
        return self.streams.setdefault((ctx.device_id, lane), f"{ctx.device_id}:{lane}")

    def record_event(self, stream):
        with self.lock:
            n = sum(1 for e in self.log if e[0] == "record")
            self.log.append(("record", stream, n))
        return Event(self.log, stream, n)

    def wait_event(self, stream, event):
        self.log.append(("wait", stream, event.stream, event.n))

    def synchronize_all(self):
        self.log.append(("sync_all",))

    def kinds(self, kind):
        return [e for e in self.log if e[0] == kind]


@pytest.fixture
def device():
    register_device_type(DEVICE)
    hooks = RecordingDevice()
    saved = streams.device_hooks(DEVICE)
    streams.register_device_hooks(DEVICE, hooks)
    eng = Engine(num_workers=2)
    yield eng, hooks, mx.Context(DEVICE, 0)
    eng.close()
    if saved is None:
        streams._HOOKS.pop(DEVICE, None)
    else:
        streams.register_device_hooks(DEVICE, saved)


def _launch(log, name):
    def fn(rctx):
        log.append((name, rctx.stream, threading.get_ident()))

    return fn


def test_ready_device_ops_launch_in_the_pushing_thread(device):
    eng, hooks, dev = device
    launches = []
    a, b = eng.new_variable(), eng.new_variable()
    eng.push_sync(_launch(launches, "w_a"), dev, [], [a], name="w_a")
    for i in range(5):
        eng.push_sync(_launch(launches, f"step{i}"), dev, [a], [b], name=f"step{i}")  # unknown ops, every one
    assert len(launches) == 6  # all launched inside their pushes, before any wait
    eng.wait_for_all()
    me = threading.get_ident()
    assert [n for n, _, _ in launches] == ["w_a"] + [f"step{i}" for i in range(5)]
    assert all(t == me for _, _, t in launches), "a device op was handed to another thread"
    assert all(s == "0:compute" for _, s, _ in launches)


def test_ops_on_one_stream_record_no_event(device):
    eng, hooks, dev = device
    a = eng.new_variable()
    for _ in range(6):
        eng.push_sync(lambda r: None, dev, [], [a], name="inc")
    eng.push_sync(lambda r: None, dev, [a], [], name="read")
    assert hooks.kinds("record") == [] and hooks.kinds("wait") == []
    eng.wait_for_all()
    assert hooks.kinds("record") == []  # wait_for_all syncs the device, no event needed
    assert hooks.kinds("sync_all") == [("sync_all",)]


def test_an_event_only_where_another_stream_or_the_host_waits(device):
    eng, hooks, dev = device
    a = eng.new_variable()
    eng.push_sync(lambda r: None, dev, [], [a], name="w1")
    eng.push_sync(lambda r: None, dev, [], [a], name="w2")
    eng.push_sync(lambda r: None, dev, [a], [], prop=FnProperty.COPY_FROM_GPU, name="copy_out")
    eng.wait_to_read(a)  # a host read: syncs on the var's last event
    eng.wait_for_all()
    # one event, after w2, recorded by whichever needed it first (the copy lane or the host read)
    assert hooks.kinds("record") == [("record", "0:compute", 0)]
    assert hooks.kinds("wait") == [("wait", "0:copy", "0:compute", 0)]
    assert ("sync", "0:compute", 0) in hooks.log


def test_host_ops_and_host_reads_sync_on_the_last_write(device):
    eng, hooks, dev = device
    a, b = eng.new_variable(), eng.new_variable()
    eng.push_sync(lambda r: None, dev, [], [a], name="wa")
    eng.push_sync(lambda r: None, dev, [], [b], name="wb")
    seen = []
    eng.push_sync(lambda r: seen.append(r.stream), mx.cpu(), [a], [], name="host_reader")
    eng.wait_for_var(b)
    eng.wait_for_var(a)
    assert seen == [None]
    records = hooks.kinds("record")
    assert len(records) == 2  # one event per var that the host waited for, none per op
    synced = {e[2] for e in hooks.kinds("sync")}
    assert synced == {0, 1}


def test_a_write_on_another_stream_waits_for_the_reads(device):
    eng, hooks, dev = device
    a = eng.new_variable()
    eng.push_sync(lambda r: None, dev, [], [a], name="init")
    eng.push_sync(lambda r: None, dev, [a], [], prop=FnProperty.COPY_FROM_GPU, name="reader_on_copy")
    eng.push_sync(lambda r: None, dev, [a], [], prop=FnProperty.COPY_FROM_GPU, name="reader_on_copy_2")
    eng.push_sync(lambda r: None, dev, [], [a], name="overwrite")
    eng.wait_for_all()
    waits = hooks.kinds("wait")
    assert ("wait", "0:copy", "0:compute", 0) in waits  # the reads wait for init
    copy_waits = [w for w in waits if w[1] == "0:compute" and w[2] == "0:copy"]
    assert len(copy_waits) == 1  # one mark per stream: the second read covers the first


def test_device_errors_follow_the_engine_rules(device):
    eng, hooks, dev = device
    a, b = eng.new_variable(), eng.new_variable()
    ran = []

    def boom(r):
        raise RuntimeError("launch failed")

    eng.push_sync(boom, dev, [], [a], name="bad_kernel")
    eng.push_sync(lambda r: ran.append(1), dev, [a], [b], name="dependent")
    with pytest.raises(mx.MXNetError, match="bad_kernel"):
        eng.wait_for_var(b)
    assert ran == []  # skipped, and its output inherited the error
    eng.wait_for_all()
