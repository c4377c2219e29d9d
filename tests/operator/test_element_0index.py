"""choose_element_0index / fill_element_0index against MXNet 1.9.1 (fixtures_element_0index), out-of-range
indices included, and shape errors naming the argument."""

from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_element_0index" / "mxnet_ref.npz")


def test_choose_and_its_gradient_match_mxnet():
    a = mx.nd.array(REF["lhs"])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.choose_element_0index(a, mx.nd.array(REF["idx"]))
    y.backward(mx.nd.array(REF["head"]))
    np.testing.assert_array_equal(y.asnumpy(), REF["choose"])
    np.testing.assert_array_equal(a.grad.asnumpy(), REF["choose_grad"])


def test_fill_matches_mxnet():
    out = mx.nd.fill_element_0index(mx.nd.array(REF["lhs"]), mx.nd.array(REF["mhs"]), mx.nd.array(REF["idx"]))
    np.testing.assert_array_equal(out.asnumpy(), REF["fill"])


def test_shape_errors_name_the_argument():
    with pytest.raises(mx.MXNetError, match="rhs"):
        mx.nd.choose_element_0index(mx.nd.ones((3, 2)), mx.nd.ones((4,)))
    with pytest.raises(mx.MXNetError, match="2-D"):
        mx.nd.choose_element_0index(mx.nd.ones((3,)), mx.nd.ones((3,)))
