"""Issue 34, item 5 (mx.np): what NumPy refuses is refused (a float or boolean shape was truncated), what
mxasync cannot hold is refused (complex values became float32, object arrays were accepted), and
integer ``//`` follows NumPy (it was a float division: ``// 0`` gave inf)."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import mxasync as mx
from mxasync import np


@pytest.mark.fault
@pytest.mark.parametrize("make", [lambda: np.ones((2.5, 3)), lambda: np.zeros((2, 3.0)), lambda: np.empty(2.5),
                                  lambda: np.full((2.5,), 1), lambda: np.ones(True), lambda: np.ones("a"),
                                  lambda: np.ones(6).reshape((2.0, 3)), lambda: np.broadcast_to(np.ones(3), (1.5, 3))])
def test_a_shape_numpy_refuses_is_refused(make):
    with pytest.raises(TypeError, match=r"np\.\w+: expected a sequence of integers or a single integer as the "
                                        r"shape, got") as info:
        make()
    assert isinstance(info.value, mx.MXNetError)


@pytest.mark.fault
@pytest.mark.parametrize("src, what", [([1 + 2j], r"complex values \(complex128\)"),
                                       (onp.array([1, 2], onp.complex64), r"complex values \(complex64\)"),
                                       (onp.array([1, "a"], dtype=object), r"object arrays \(object\)"),
                                       (["a", "b"], r"strings \(<U1\)")])
def test_values_mxasync_cannot_hold_are_refused(src, what):
    with pytest.raises(TypeError, match=rf"mx\.np\.array: {what} are not supported"):
        np.array(src)
    with pytest.raises(TypeError, match="complex values"):
        np.array([1.0, 2.0], dtype="complex64")


@pytest.mark.fault
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_floor_division_is_numpys(dtype):
    a, b = onp.array([7, 2, 0, 9], dtype), onp.array([2, 0, 3, 4], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns of the division by zero
        want, want0 = a // b, a // 0
    got = np.array(a) // np.array(b)
    assert got.dtype == onp.dtype(dtype) and got.asnumpy().tolist() == want.tolist()
    assert (np.array(a) // 0).asnumpy().tolist() == want0.tolist() == [0, 0, 0, 0]
    assert (9 // np.array(a[:2])).asnumpy().tolist() == (9 // a[:2]).tolist()
    x = np.array(a)
    x //= 2
    assert x.asnumpy().tolist() == (a // 2).tolist()


@pytest.mark.fault
def test_float_floor_division_is_numpys():
    a = onp.array([-7.5, 2.0, 1.0], onp.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        onp.testing.assert_array_equal((np.array(a) // 2).asnumpy(), a // 2)
        onp.testing.assert_array_equal((np.array(a) // 0).asnumpy(), a // 0)
