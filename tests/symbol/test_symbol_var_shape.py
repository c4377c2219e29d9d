"""``mx.sym.var(name, shape=n)`` takes an integer for a 1-D shape, as MXNet does."""

from __future__ import annotations

import numpy as np

import mxasync as mx


def test_integer_shape_is_one_dimensional():
    v = mx.sym.var("b", shape=1)
    assert v.infer_shape_partial()[1] == [(1,)]
    w = mx.sym.var("w", shape=np.int64(3))
    assert w.infer_shape_partial()[1] == [(3,)]
    assert (mx.sym.var("x", shape=5) * 2).infer_shape()[1] == [(5,)]
