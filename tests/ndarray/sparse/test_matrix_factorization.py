"""``examples/sparse/matrix_factorization.py`` (sparse-gradient embeddings, lazy Adam and SGD) prints the
per-epoch losses MXNet 1.9.1 printed for the same data and start (fixtures/make_matrix_factorization.py)."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
with open(os.path.join(os.path.dirname(__file__), "fixtures", "matrix_factorization.json")) as _f:
    RUNS = json.load(_f)


def _example():
    spec = importlib.util.spec_from_file_location(
        "matrix_factorization", os.path.join(ROOT, "examples", "sparse", "matrix_factorization.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("want", RUNS, ids=[r["optimizer"] for r in RUNS])
def test_matrix_factorization_matches_mxnet(want):
    got = _example().main(want["args"])
    assert got["grad_stype"] == "row_sparse"
    assert got["epoch_loss"] == pytest.approx(want["epoch_loss"], rel=1e-4)
    assert got["epoch_loss"][-1] < 0.9 * got["epoch_loss"][0]  # it trains
