"""``pressure.runnable_elsewhere``: the kernel's runnable-thread count less the caller, sampled."""

from __future__ import annotations

from mxasync.backends.numpy import pressure


def test_reads_the_fourth_field_less_the_caller(monkeypatch):
    monkeypatch.setattr(pressure, "_at", -1.0)
    monkeypatch.setattr(pressure.os, "pread", lambda fd, n, off: b"0.50 0.40 0.30 5/321 4242\n")
    assert pressure.runnable_elsewhere() == 4
    monkeypatch.setattr(pressure.os, "pread", lambda fd, n, off: b"0.50 0.40 0.30 1/321 4242\n")
    assert pressure.runnable_elsewhere() == 4  # sampled at most every 20 ms: the old value stands
    monkeypatch.setattr(pressure, "_at", -1.0)
    assert pressure.runnable_elsewhere() == 0


def test_unreadable_means_nothing_else_runs(monkeypatch):
    def broken(*args):
        raise OSError("no /proc here")

    monkeypatch.setattr(pressure, "_at", -1.0)
    monkeypatch.setattr(pressure.os, "pread", broken)
    assert pressure.runnable_elsewhere() == 0


def test_the_real_reading_is_a_count():
    pressure._at = -1.0
    assert pressure.runnable_elsewhere() >= 0
