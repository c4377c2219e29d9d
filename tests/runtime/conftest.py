from __future__ import annotations

import pytest

from mxasync.runtime.engine import Engine
from mxasync.runtime.engine.naive import NaiveEngine

_ENGINES: dict[str, Engine] = {}


def _engine(kind: str) -> Engine:
    eng = _ENGINES.get(kind)
    if eng is None:
        eng = _ENGINES[kind] = NaiveEngine() if kind == "naive" else Engine(num_workers=2)
    return eng


@pytest.fixture(params=["threaded", "naive"])
def engine(request) -> Engine:
    """A private engine of each kind (the process-wide one is left alone)."""
    eng = _engine(request.param)
    yield eng
    try:
        eng.wait_for_all()
    except Exception:
        pass


@pytest.fixture
def threaded() -> Engine:
    eng = _engine("threaded")
    yield eng
    try:
        eng.wait_for_all()
    except Exception:
        pass
