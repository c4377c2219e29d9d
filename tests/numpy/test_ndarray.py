"""mx.np.ndarray: an engine array with NumPy's indexing, autograd, conversions and protocols."""

from __future__ import annotations

import asyncio

import numpy as onp
import pytest

import mxasync as mx
from mxasync import np, npx


def test_indexing_views_and_copies():
    a = np.arange(12).reshape(3, 4)
    row = a[1]
    row[0] = 100.0  # a contiguous basic index is a view, as in MXNet
    assert a[1, 0].item() == 100.0
    col = a[:, 1]  # not contiguous: a copy (MXNet's rule)
    col[0] = -1.0
    assert a[0, 1].item() == 1.0
    assert a[np.array([True, False, True], dtype=bool)].shape == (2, 4)
    assert a[[0, 2], [1, 3]].tolist() == [1.0, 11.0]
    a[a > 10] = 0
    assert a.asnumpy().max() == 10.0 and (a.asnumpy() == 0).sum() == 3  # 100 and 11 zeroed


def test_gradients_through_indexing_and_ops():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = (x[np.array([True, False], dtype=bool)] * x[1]).sum() + np.log(x).mean()
    y.backward()
    want = onp.array([[3.0, 4.0], [1.0, 2.0]]) + 1 / (4 * onp.array([[1.0, 2.0], [3.0, 4.0]]))
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)
    assert type(x.grad) is np.ndarray


def test_conversions_share_memory():
    a = np.zeros((2, 2))
    b = a.as_nd_ndarray()
    assert type(b) is mx.nd.NDArray
    b[:] = 3
    assert a.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert type(mx.nd.ones(2).as_np_ndarray()) is np.ndarray


def test_awaitable_and_repr():
    async def main():
        z = np.ones((2,)) * 2
        return (await z).tolist()

    assert asyncio.run(main()) == [2.0, 2.0]
    assert repr(np.array([1.0, 2.0])) == "array([1., 2.])"
    assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert f"{np.array(3.14159):.2f}" == "3.14"


def test_array_function_protocol():
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert type(onp.sum(m)) is np.ndarray           # mx.np.sum ran
    assert float(onp.median(m)) == 1.5              # NumPy's own, on a copy


def test_errors_name_the_op():
    with pytest.raises(mx.MXNetError, match="_npi_add"):
        np.ones((2, 3)) + np.ones((4,))
    with pytest.raises(NotImplementedError):
        np.sin(np.ones(2), where=False)
    with pytest.raises(ValueError):
        np.ones((2, 3)).transpose((0, 0))
    # shape inference tries float32, int64 and bool stand-ins; the error is the float32 one's (it
    # said dtypes ['bool'] of a float32 array)
    with pytest.raises(mx.MXNetError, match=r"_npi_reshape: .*\['float32'\].*size 6 into shape \(4,4\)"):
        np.ones((2, 3)).reshape((4, 4))


def test_set_np_default_dtype():
    npx.set_np(dtype=True)
    try:
        assert np.ones(2).dtype == onp.float64 and np.array([1, 2]).dtype == onp.float64
    finally:
        npx.reset_np()
    assert np.ones(2).dtype == onp.float32


def test_setitem_trims_leading_unit_axes_and_takes_float_index_arrays():
    # MXNet 1.9.1: a value with extra leading 1-size axes fits the selection (d2l's sequence chapter
    # writes a (1, 1) prediction into x[i]); float index arrays (np.array([1]) is float32) truncate
    got = np.zeros(5)
    got[2] = np.array([[3.0]])
    got[3] = [[[4.0]]]
    got[0:2] = np.ones((1, 1, 2)) * 7
    ref = onp.array([7.0, 7.0, 3.0, 4.0, 0.0])
    onp.testing.assert_array_equal(got.asnumpy(), ref)
    m = np.zeros((2, 3))
    m[np.array([1.0]), 0] = np.array([[[5.0]]])
    m[np.array([0.0, 1.0]), np.array([2.0, 1.0])] = np.array([6.0, 8.0])
    onp.testing.assert_array_equal(m.asnumpy(), [[0, 0, 6], [5, 8, 0]])
    bad = np.zeros(4)
    with pytest.raises(mx.MXNetError, match="cannot fill"):  # a leading axis of 2 does not fit a scalar
        bad[1] = np.ones((2, 1))


def test_range_keys_index_like_lists():
    # MXNet 1.9.1 takes a range anywhere in a key, as the list it spells (d2l's information-theory
    # appendix indexes p[:, range(n)]); beside a slice it raised TypeError: int() ... not 'range'
    host = onp.arange(24.0).reshape(2, 3, 4)
    x = np.array(host)
    for key in [(slice(None), range(1, 3)), (range(2), [1, 0]), (range(2), 1, range(0, 4, 2)), (1, range(3), 0)]:
        want = host[tuple(list(k) if isinstance(k, range) else k for k in key)]
        onp.testing.assert_array_equal(x[key].asnumpy(), want)
    x.attach_grad()
    with mx.autograd.record():
        y = (x[:, range(1, 3)] * 2).sum()
    y.backward()
    want = onp.zeros_like(host)
    want[:, 1:3] = 2
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)
    z = np.zeros((2, 3))
    z[range(2), range(1, 3)] = 5
    onp.testing.assert_array_equal(z.asnumpy(), [[0, 5, 0], [0, 0, 5]])


def test_a_0d_array_is_not_iterable():
    # iter() itself refuses a 0-d array, as NumPy's does, so np.iterable says False: matplotlib's
    # axvline(x=np.mean(xs)) (d2l's statistics appendix) asked np.iterable, then iterated and failed
    scalar = np.array(3.0)
    assert not onp.iterable(scalar) and onp.iterable(np.ones(2))
    with pytest.raises(TypeError, match="0-d"):
        iter(scalar)
    assert [float(v) for v in np.arange(3)] == [0.0, 1.0, 2.0]


def test_setitem_refuses_a_value_that_cannot_fill_the_selection_at_the_call():
    # MXNet checks at the call; the error used to surface at the next read, from the engine
    x = mx.np.zeros(4)
    with pytest.raises(mx.MXNetError, match=r"value of shape \(2, 1\) cannot fill a selection of shape \(\)"):
        x[1] = mx.np.ones((2, 1))
    with pytest.raises(ValueError, match=r"value of shape \(3,\) cannot fill a selection of shape \(2,\)"):
        x[0:2] = onp.ones(3)
    with pytest.raises(IndexError):
        x[5] = 1.0
    x[1] = mx.np.ones((1, 1))  # extra leading 1-size axes still fit (MXNet's rule)
    x[[0, 3]] = 7
    onp.testing.assert_array_equal(x.asnumpy(), [7, 1, 0, 7])


def test_setitem_with_newaxis_in_the_key():
    y = mx.np.zeros((2, 3))
    y[:, None] = mx.np.arange(3)
    y[mx.np.array([1], dtype="int64"), None, 0] = 9
    want = onp.zeros((2, 3))
    want[:, None] = onp.arange(3)
    want[onp.array([1]), None, 0] = 9
    onp.testing.assert_array_equal(y.asnumpy(), want)
