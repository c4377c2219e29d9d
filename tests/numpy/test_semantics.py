"""mx.np's dtype and shape rules against MXNet 1.9.1's (fixtures/promotion.json, made by
fixtures/make_fixtures.py with MXNet itself)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as onp
import pytest

from mxasync import np

FIX = json.loads((Path(__file__).parent / "fixtures" / "promotion.json").read_text())


@pytest.mark.parametrize("key", sorted(k for k, v in FIX["binary"].items() if v != "error"))
def test_binary_dtype(key):
    name, a, b = key.split(":")
    res = getattr(np, name)(np.ones((2,), dtype=a), np.ones((2,), dtype=b))
    assert str(res.dtype) == FIX["binary"][key]


@pytest.mark.parametrize("key", sorted(FIX["scalar"]))
def test_scalar_dtype(key):
    name, a, kind = key.split(":")
    x = np.ones((2,), dtype=a)
    s = 2 if kind == "int" else 2.5
    assert str(getattr(np, name)(x, s).dtype) == FIX["scalar"][key]


@pytest.mark.parametrize("table", ["unary", "reduce"])
def test_unary_and_reduce_dtype(table):
    for key, want in FIX[table].items():
        name, a = key.split(":")
        assert str(getattr(np, name)(np.ones((2,), dtype=a)).dtype) == want, key


def test_shapes():
    a = np.arange(6).reshape(2, 3)
    got = {"a[1,2]": list(a[1, 2].shape), "a.sum()": list(a.sum().shape), "a[:, 1]": list(a[:, 1].shape),
           "a[None, 1]": list(a[None, 1].shape), "array(list).dtype": str(np.array([1, 2]).dtype),
           "array(bool list).dtype": str(np.array([True, False]).dtype)}
    assert got == FIX["shapes"]


def test_values_match_numpy():
    rng = onp.random.default_rng(0)
    x = rng.uniform(-1, 1, (3, 4)).astype("float32")
    y = rng.uniform(0.5, 1.5, (4,)).astype("float32")
    mx_x, mx_y = np.array(x), np.array(y)
    onp.testing.assert_allclose((mx_x * mx_y - mx_x / mx_y).asnumpy(), x * y - x / y, rtol=1e-5)
    onp.testing.assert_allclose(np.std(mx_x, axis=0).asnumpy(), x.std(axis=0), rtol=1e-5)
    onp.testing.assert_allclose(np.einsum("ij,j->i", mx_x, mx_y).asnumpy(), x @ y, rtol=1e-5)
    onp.testing.assert_allclose(np.concatenate([mx_x, mx_x], axis=1).asnumpy(), onp.concatenate([x, x], 1))
