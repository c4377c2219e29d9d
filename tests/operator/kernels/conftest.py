"""Shared helpers for the kernel tests: tolerances per dtype and a central-difference gradient."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

# make_fixtures.py needs the real mxnet and is run by hand only
collect_ignore = ["fixtures/make_fixtures.py"]

TOL = {np.float32: dict(rtol=1e-4, atol=1e-3), np.float64: dict(rtol=1e-7, atol=1e-9)}
GRAD_TOL = dict(rtol=1e-5, atol=1e-6)  # float64 analytic vs central differences


def numerical_grad(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, head: np.ndarray, eps: float = 1e-6):
    """d/dx of ``sum(f(x) * head)`` by central differences (x is restored afterwards)."""
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = float(np.sum(f(x) * head))
        flat[i] = old - eps
        down = float(np.sum(f(x) * head))
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad


class Checker:
    """Fixture object: ``close(a, b, dtype)`` and ``grad(f, x, head, analytic)``."""

    numerical_grad = staticmethod(numerical_grad)

    @staticmethod
    def close(actual, expected, dtype=np.float64, msg: str = "") -> None:
        np.testing.assert_allclose(actual, expected, err_msg=msg, **TOL[np.dtype(dtype).type])

    @staticmethod
    def grad(f, x: np.ndarray, head: np.ndarray, analytic: np.ndarray, msg: str = "") -> None:
        assert x.dtype == np.float64, "gradient checks run in float64"
        np.testing.assert_allclose(analytic, numerical_grad(f, x, head), err_msg=msg, **GRAD_TOL)


@pytest.fixture
def check() -> Checker:
    return Checker()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture
def spy(monkeypatch):
    """``spy(module, name)``: ``module.name`` still runs, and the returned list gets an entry per call
    (how a test checks that the layout it forced really ran)."""

    def install(module, name: str) -> list:
        calls: list = []
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: (calls.append(1), real(*a, **k))[1])
        return calls

    return install
