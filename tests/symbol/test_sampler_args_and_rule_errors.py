"""Symbolic samplers take shape and dtype positionally after their parameters (MXNet's order); an op whose
shape rule trips on odd input shapes gives an MXNetError naming the op, not a bare Python error."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx


def test_sampler_shape_and_dtype_positionally():
    assert mx.sym.random.normal(0, -1, (2, 2)).infer_shape()[1] == [(2, 2)]
    assert mx.sym.random.uniform(0, 1, (3,), "float64").infer_type()[1] == [np.float64]
    with pytest.raises(mx.MXNetError, match="takes low, high, shape and dtype positionally"):
        mx.sym.random.uniform(0, 1, (3,), "float64", 5)


def test_a_rule_slip_is_an_mxnet_error_naming_the_op():
    out = mx.sym.dot(mx.sym.Variable("a"), mx.sym.Variable("b"), name="d")
    with pytest.raises(mx.MXNetError, match=r"infer_shape: error in operator d \(dot\).*rhs=\(\)"):
        out.infer_shape(a=(2, 2), b=())
