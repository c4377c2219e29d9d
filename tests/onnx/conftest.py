"""Helpers for the ONNX tests: they skip cleanly without the onnx extra (onnx, onnxruntime)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def ort_run():
    """``ort_run(path_or_bytes, feeds) -> list of outputs`` through ONNX Runtime on the CPU."""
    ort = pytest.importorskip("onnxruntime")

    def run(model, feeds):
        so = ort.SessionOptions()
        so.log_severity_level = 3  # no warning per initializer listed among the inputs (MXNet's layout)
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        return sess.run(None, {n: feeds[n] for n in names if n in feeds})

    return run


def assert_close(got, want, tol=1e-4):
    """Within ``tol`` absolutely and relative to the output's scale (a vanishing output proves nothing)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = float(np.abs(got - want).max()) if want.size else 0.0
    scale = float(np.abs(want).max()) if want.size else 0.0
    assert diff <= tol, f"max abs difference {diff} > {tol}"
    if scale > 0:
        assert diff / scale <= tol, f"max abs difference {diff} is {diff / scale:.2e} of the output's scale {scale}"
    return diff


@pytest.fixture(scope="session")
def close():
    return assert_close


@pytest.fixture(scope="session")
def onnx_mod():
    return pytest.importorskip("onnx")
