"""Symbol expressions infer what the real MXNet 1.9.1 infers (fluent methods, creation functions,
positional params).  Expressions and MXNet's answers: tests/fixtures/mxnet/sym_compat.json, made
by tests/fixtures/mxnet/make_sym_compat.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

TABLE = json.loads((Path(__file__).parents[1] / "fixtures" / "mxnet" / "sym_compat.json").read_text())


@pytest.mark.parametrize("expr", sorted(TABLE))
def test_same_as_mxnet(expr):
    env = {"mx": mx, "np": np, "a": mx.sym.Variable("a"), "b": mx.sym.Variable("b")}
    assert repr(eval(expr, env)) == TABLE[expr]  # noqa: S307 - our own fixture


def test_creation_nodes_compute():
    ex = (mx.sym.Variable("a") + mx.sym.ones((2, 3))).bind(mx.cpu(), {"a": mx.nd.ones((2, 3))})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), 2)
    assert mx.sym.eye(2, dtype="int32").bind(mx.cpu(), {}).forward()[0].asnumpy().tolist() == [[1, 0], [0, 1]]
    assert mx.sym.full((2,), 7).bind(mx.cpu(), {}).forward()[0].asnumpy().tolist() == [7, 7]
    assert mx.sym.zeros((2,), name="z").name == "z"
