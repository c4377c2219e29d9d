"""The generated mx.nd/mx.sym functions take positional arguments in MXNet 1.9.1's order.

op_signatures.json lists, for every mx.nd function of the real MXNet 1.9.1, its inputs
then params in positional order (made by tests/fixtures/mxnet/make_op_signatures.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.registry import get_op, list_ops

SIGNATURES = json.loads((Path(__file__).parents[1] / "fixtures" / "mxnet" / "op_signatures.json").read_text())
SHARED = sorted(n for n in list_ops(include_aliases=True) if n in SIGNATURES)


def test_most_ops_are_in_mxnets_table():
    assert len(SHARED) > 150


@pytest.mark.parametrize("name", SHARED)
def test_positional_order_matches_mxnet(name):
    op = get_op(name)
    ours = [*op.prop_cls.arguments, *getattr(op.prop_cls, "aux_states", ()), *op.param_cls.param_order()]
    theirs = SIGNATURES[name]
    assert [n for n in ours if n in theirs] == [n for n in theirs if n in ours], (ours, theirs)


def test_positional_params_after_the_inputs():
    x = mx.nd.array([[1, 5, 3], [4, 2, 6]])
    np.testing.assert_array_equal(mx.nd.sum(x, 1).asnumpy(), [9, 12])
    np.testing.assert_array_equal(mx.nd.clip(x, 2, 5).asnumpy(), [[2, 5, 3], [4, 2, 5]])
    assert mx.nd.transpose(x, (1, 0)).shape == (3, 2)
    assert mx.nd.norm(x, 2, 1, None, True).shape == (2, 1)  # MXNet's order: ord, axis, out_dtype, keepdims
    assert mx.nd.take(x, mx.nd.array([1]), 1).shape == (2, 1)
    sym = mx.sym.sum(mx.sym.Variable("a"), 1)
    assert sym.infer_shape(a=(2, 3))[1] == [(2,)]


def test_positional_errors_name_the_op():
    x = mx.nd.ones((2, 2))
    with pytest.raises(mx.MXNetError, match="clip: got 'a_min' both by position and by keyword"):
        mx.nd.clip(x, 1, a_min=0)
    with pytest.raises(mx.MXNetError, match="clip: takes at most 1 inputs and 2 params"):
        mx.nd.clip(x, 1, 2, 3)


def test_full_reductions_have_shape_one_as_in_mxnet():
    x = mx.nd.ones((2, 3))
    for fn in (mx.nd.sum, mx.nd.mean, mx.nd.max, mx.nd.min, mx.nd.prod, mx.nd.norm):
        assert fn(x).shape == (1,), fn.__name__
    assert mx.nd.sum(x, axis=(0, 1)).shape == (1,)
    assert mx.nd.sum(x, keepdims=True).shape == (1, 1)
    assert mx.nd.sum(x).asscalar() == 6
