"""Shapes given to the creation functions must be non-negative integers (numpy integers allowed)."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape, message", [
    ((2.5, 3), r"shape \(2.5, 3\) must hold integers, but dimension 0 is 2.5 \(float\)"),
    ((2, 3.0), r"dimension 1 is 3.0 \(float\)"),
    ((True, 2), r"dimension 0 is True \(bool\)"),
    ((-1, 3), r"shape \(-1, 3\) has a negative dimension 0 \(-1\)"),
    (2.5, r"shape must be an int or a tuple of ints, got 2.5"),
])
def test_refused(fn, shape, message):
    with pytest.raises(mx.MXNetError, match=rf"mx.nd.{fn}: .*{message}") as info:
        getattr(mx.nd, fn)(shape)
    assert isinstance(info.value, ValueError)


def test_full_names_itself_and_integers_pass():
    with pytest.raises(ValueError, match="mx.nd.full: shape"):
        mx.nd.full((1.5,), 2)
    assert mx.nd.ones((np.int64(2), np.int32(3))).shape == (2, 3)
    assert mx.nd.zeros(np.uint8(4)).shape == (4,)
    assert mx.nd.zeros([2, 0]).shape == (2, 0)
