"""``examples/sparse/sparse_linear.py`` trains to MXNet 1.9.1's losses from the same start."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIX = os.path.join(os.path.dirname(__file__), "fixtures", "sparse_linear.json")


def test_sparse_linear_matches_mxnet(capsys):
    spec = importlib.util.spec_from_file_location("sparse_linear",
                                                  os.path.join(ROOT, "examples", "sparse", "sparse_linear.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with open(FIX) as f:
        want = json.load(f)
    got = mod.main(want["args"])
    assert got["epoch_loss"] == pytest.approx(want["epoch_loss"], rel=1e-5)
    assert got["accuracy"] == want["accuracy"]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["engine"] == "mxasync"
