"""MXNet 1.9.1's outputs for the ``mx.image`` tests (made by ``fixtures/make_fixtures.py``), by name."""

from __future__ import annotations

import json
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
IMAGES = os.path.join(FIXTURES, "images")
REC = os.path.join(FIXTURES, "data.rec")
IDX = os.path.join(FIXTURES, "data.idx")
LST = os.path.join(FIXTURES, "data.lst")

with open(os.path.join(FIXTURES, "expected.json")) as _f:
    META = json.load(_f)
with np.load(os.path.join(FIXTURES, "expected.npz")) as _z:
    EXPECTED = {k: _z[k] for k in _z.files}
NAMES: list[str] = META["names"]


def _read(name: str) -> bytes:
    with open(os.path.join(IMAGES, name), "rb") as f:
        return f.read()


RAW: list[bytes] = [_read(n) for n in NAMES]
