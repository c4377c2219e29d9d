"""Suite-wide checks."""

from __future__ import annotations

import pytest

import mxasync as mx


@pytest.fixture(autouse=True)
def _no_leaked_engine_error():
    """A test must surface the errors of the ops it pushed; one left behind would fail a later,
    unrelated test at its next wait (engine errors surface once, at the next sync point)."""
    yield
    engine = mx.engine.get()
    if engine._loop.in_loop_thread():
        return
    try:
        engine.wait_for_all()
    except Exception as exc:  # noqa: BLE001 - reported as this test's failure
        pytest.fail(f"this test left an unreported engine error behind: {exc}", pytrace=False)
