"""Stream ordering for device ops, checked with a fake device (no GPU needed)."""

from __future__ import annotations

import pytest

import mxasync as mx
from mxasync.runtime import FnProperty, streams
from mxasync.runtime.engine import Engine


class FakeEvent:
    def __init__(self, log, stream):
        self.log, self.stream, self.done = log, stream, False

    def synchronize(self):
        self.log.append(("sync", self.stream))
        self.done = True


class FakeHooks:
    def __init__(self):
        self.log = []
        self.streams = {}

    def stream(self, ctx, lane):
        return self.streams.setdefault((ctx, lane), f"{ctx}:{lane}")

    def record_event(self, stream):
        return FakeEvent(self.log, stream)

    def wait_event(self, stream, event):
        self.log.append(("wait", stream, event.stream))

    def synchronize_all(self):
        self.log.append(("sync_all",))


@pytest.fixture
def fake_gpu():
    saved = dict(streams._HOOKS)
    hooks = FakeHooks()
    streams.register_device_hooks("gpu", hooks)
    eng = Engine(num_workers=2)
    yield eng, hooks
    eng.close()
    streams._HOOKS.clear()
    streams._HOOKS.update(saved)


def test_stream_order_event_waits_and_host_sync(fake_gpu):
    eng, hooks = fake_gpu
    g = mx.gpu(0)
    a = eng.new_variable()
    seen = []
    eng.push_sync(lambda r: seen.append(r.stream), g, [], [a], name="gpu_write")
    eng.push_sync(lambda r: seen.append(r.stream), g, [a], [], name="gpu_read_same_stream")
    eng.wait_for_all()
    assert seen == ["gpu(0):compute", "gpu(0):compute"]
    assert not [e for e in hooks.log if e[0] == "wait"]  # same stream: stream order suffices

    eng.push_sync(lambda r: seen.append(r.stream), g, [a], [], prop=FnProperty.COPY_FROM_GPU, name="copy_out")
    eng.wait_for_all()
    assert seen[-1] == "gpu(0):copy"
    assert ("wait", "gpu(0):copy", "gpu(0):compute") in hooks.log  # other stream: an event wait

    hooks.log.clear()
    eng.push_sync(lambda r: seen.append(r.stream), mx.cpu(), [a], [], name="host_reader")
    eng.wait_for_all()
    assert seen[-1] is None and ("sync", "gpu(0):compute") in hooks.log  # host code waits for the device

    hooks.log.clear()
    eng.wait_for_var(a)
    assert ("sync", "gpu(0):compute") in hooks.log


def test_write_after_read_across_streams_waits_for_readers(fake_gpu):
    eng, hooks = fake_gpu
    g = mx.gpu(0)
    a = eng.new_variable()
    eng.push_sync(lambda r: None, g, [], [a], name="init")
    eng.push_sync(lambda r: None, g, [a], [], prop=FnProperty.COPY_FROM_GPU, name="reader_on_copy")
    eng.wait_for_all()
    hooks.log.clear()
    eng.push_sync(lambda r: None, g, [], [a], name="overwrite")
    eng.wait_for_all()
    assert ("wait", "gpu(0):compute", "gpu(0):copy") in hooks.log
