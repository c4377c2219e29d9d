"""mx.profiler: Domain/Task/Frame/Event/Counter/Marker and the aggregate statistics (MXNet's layout)."""

import json

import pytest

import mxasync as mx


@pytest.fixture
def running(tmp_path):
    mx.profiler.set_config(filename=str(tmp_path / "trace.json"), aggregate_stats=True)
    mx.profiler.dumps(reset=True)
    mx.profiler.set_state("run")
    yield tmp_path / "trace.json"
    mx.profiler.set_state("stop")
    mx.profiler.set_config()
    mx.profiler.dumps(reset=True)


def test_ranges_counters_markers_in_stats_and_trace(running):
    d = mx.profiler.Domain("app")
    with mx.profiler.Task(d, "load"):
        pass
    f = mx.profiler.Frame(d, "iter")
    f.start()
    f.stop()
    e = mx.profiler.Event("ev")
    e.start()
    e.stop()
    c = mx.profiler.Counter(d, "items", 5)
    c += 2
    c -= 4
    mx.profiler.Marker(d, "go").mark("process")
    stats = json.loads(mx.profiler.dumps(format="json"))
    assert set(stats) == {"Time", "Memory", "Unit"}
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}
    t = stats["Time"]
    assert t["app"]["load"]["Count"] == 1
    assert t["app,frame"]["iter"]["Count"] == 1 and t["event"]["ev"]["Count"] == 1
    assert t["app"]["items"] == {"Count": 3, "Total": 15.0, "Min": 3.0, "Max": 7.0, "Avg": 5.0}
    assert t["app,instant_marker"] == {}
    mx.profiler.dump(False)
    phases = {(ev["name"], ev["ph"]) for ev in json.loads(running.read_text())["traceEvents"]}
    assert {("load", "X"), ("items", "C"), ("go", "i")} <= phases


def test_op_counts_and_sorting(running):
    x = mx.nd.zeros((4, 4))
    mx.nd.sqrt(x)
    x = x + 1
    x = x + 1
    mx.nd.waitall()
    ops = json.loads(mx.profiler.dumps(format="json"))["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1 and ops["_plus_scalar"]["Count"] == 2
    for key, field in (("count", "Count"), ("min", "Min"), ("total", "Total")):
        for asc in (True, False):
            got = [v[field] for v in json.loads(mx.profiler.dumps(format="json", sort_by=key, ascending=asc))
                   ["Time"]["operator"].values()]
            assert got == sorted(got, reverse=not asc)
    table = mx.profiler.dumps()
    assert "Profile Statistics:" in table and "_plus_scalar" in table and "Avg Time (ms)" in table
    with pytest.raises(AssertionError, match="format"):
        mx.profiler.dumps(format="xml")
    with pytest.raises(AssertionError, match="sort_by"):
        mx.profiler.dumps(sort_by="name")


def test_pause_stops_recording(running):
    d = mx.profiler.Domain("p")
    mx.profiler.pause()
    mx.profiler.Task(d, "hidden").start()
    t = mx.profiler.Task(d, "hidden")
    t.start()
    t.stop()
    mx.profiler.resume()
    t = mx.profiler.Task(d, "shown")
    t.start()
    t.stop()
    assert list(json.loads(mx.profiler.dumps(format="json"))["Time"]["p"]) == ["shown"]


def test_dumps_empty_without_aggregate_stats(tmp_path):
    mx.profiler.set_config(filename=str(tmp_path / "t.json"))
    assert mx.profiler.dumps() == ""


def test_errors():
    with pytest.raises(mx.MXNetError):
        mx.profiler.Task("not a domain", "x")
    with pytest.raises(mx.MXNetError, match="stop"):
        mx.profiler.Event("e").stop()
