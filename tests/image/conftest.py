"""Shared fixtures of the ``mx.image`` tests; makes ``image_fixtures`` importable (also for --doctest-modules)."""

from __future__ import annotations

import pathlib
import sys

import pytest

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from image_fixtures import EXPECTED  # noqa: E402


@pytest.fixture
def img0():
    """Fixture image 0 (20x28 RGB PNG) as MXNet decodes it, an NDArray."""
    import mxasync as mx

    return mx.nd.array(EXPECTED["imdecode_0"], dtype="uint8")
