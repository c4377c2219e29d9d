"""AMP changes process-wide op calls: every test here leaves it off again."""

from __future__ import annotations

import pytest

from mxasync.contrib import amp


@pytest.fixture(autouse=True)
def _amp_off():
    amp.deinit()
    yield
    amp.deinit()
