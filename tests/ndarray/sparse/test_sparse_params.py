"""Sparse arrays in ``.params`` files, both ways, byte for byte with MXNet 1.9.1's."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

import mxasync as mx

HERE = os.path.join(os.path.dirname(__file__), "fixtures")


def _expected():
    spec = importlib.util.spec_from_file_location("make_sparse_fixtures", os.path.join(HERE, "make_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.arrays()


def test_load_mxnet_file_and_save_identical_bytes(tmp_path):
    path = os.path.join(HERE, "mxnet_sparse.params")
    loaded = mx.nd.load(path)
    expected = _expected()
    assert list(loaded) == list(expected)
    for name, (stype, dense) in expected.items():
        assert loaded[name].stype == stype, name
        np.testing.assert_array_equal(loaded[name].asnumpy(), dense)
    ours = {name: mx.nd.array(dense, dtype=dense.dtype).tostype(stype) for name, (stype, dense) in expected.items()}
    out = tmp_path / "ours.params"
    mx.nd.save(str(out), ours)
    with open(path, "rb") as f:
        assert out.read_bytes() == f.read()
    again = tmp_path / "again.params"
    mx.nd.save(str(again), loaded)
    assert again.read_bytes() == out.read_bytes()
