"""Indexing a recorded array: values as unrecorded indexing gives, gradients scattered back (numpy's rules)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd as ag

SHAPE = (4, 5, 3, 6)

KEYS = [
    1, -1, slice(1, 3), (1, 2), (slice(None, None, -1), 2, slice(0, 3, 2)),
    (1, None, -2), (Ellipsis, 1), (None, slice(1, 2), 3, None),
    [2, 0, 3], np.array([[1, 3], [0, 2]]),
    (1, [2, 3]),                                    # int + list: MXNet's x[1, [2, 3]]
    (1, [2, 3], np.array([[2], [0]])),              # broadcast index arrays after an int
    (1, [2], np.array([[1], [0]]), slice(None, None, -1)),
    (slice(0, 2), [[1], [4]], slice(0, 2), slice(0, 5, 2)),
    ([1, 2], slice(1, 3), None, None, [2, 0]),      # separated index arrays move to the front
    ([[1, 1]], [[2, 3]]),
    np.array([True, False, True, True]),
]


def _expected_grad(key, out_shape, weights):
    g = np.zeros(SHAPE)
    np.add.at(g, key, weights.reshape(out_shape))
    return g


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_recorded_getitem_values_and_gradient(key):
    base = np.random.default_rng(1).normal(size=SHAPE)
    x = mx.nd.array(base, dtype=np.float64)
    x.attach_grad()
    with ag.record():
        y = x[key]
    want = base[key]
    assert y.shape == (want.shape or (1,))
    np.testing.assert_array_equal(y.asnumpy().reshape(want.shape), want)
    head = np.random.default_rng(2).normal(size=y.shape)
    y.backward(mx.nd.array(head, dtype=np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), _expected_grad(key, want.shape, head))


def test_repeated_positions_add_up():
    x = mx.nd.array(np.arange(12.0).reshape(3, 4))
    x.attach_grad()
    with ag.record():
        y = x[(1, [2, 2, 0])]
    y.backward()
    expected = np.zeros((3, 4))
    expected[1] = [1, 0, 2, 0]
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_nd_index_arrays_and_int_dtype():
    a = np.arange(4 * 5 * 3, dtype=np.int32).reshape(4, 5, 3)
    x = mx.nd.array(a, dtype=np.int32)
    x.attach_grad()
    key = (1, mx.nd.array([2, 3], dtype=np.int64), mx.nd.array([[0], [2]], dtype=np.int32))
    with ag.record():
        y = x[key]
    np_key = (1, np.array([2, 3]), np.array([[0], [2]]))
    np.testing.assert_array_equal(y.asnumpy(), a[np_key])
    y.backward()
    g = np.zeros_like(a)
    g[np_key] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), g)


def test_bad_index_names_the_shape():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with ag.record(), pytest.raises(mx.MXNetError, match=r"\(2, 3\)"):
        x[(1, [5])]
    with ag.record(), pytest.raises(mx.MXNetError, match="integer index arrays"):
        x[np.array([0.5])]
