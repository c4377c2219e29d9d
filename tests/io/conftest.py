"""Shared fixtures for the data-IO tests."""

from __future__ import annotations

import numpy as np
import pytest

# The fixture scripts import mxnet and run only under the MXNet venv; the benchmark needs every codec.
collect_ignore_glob = ["fixtures/*.py", "bench_*.py"]


def gradient_image(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A smooth RGB test picture (compresses like a photo, unlike noise)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    phase = rng.uniform(0, 6, 3)
    img = np.stack([127 + 120 * np.sin(0.11 * x + 0.07 * y + p) for p in phase], axis=2)
    return img.astype(np.uint8)


@pytest.fixture
def gradient():
    """``gradient(h, w, seed=0)``: a smooth HxWx3 uint8 picture."""
    return gradient_image
