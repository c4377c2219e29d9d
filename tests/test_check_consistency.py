"""mx.test_utils.check_consistency: agreeing symbols pass, a wrong one is caught, dtypes compare to float64."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.test_utils import check_consistency


def test_equal_symbols_pass_and_float32_is_compared_with_float64():
    x = mx.sym.Variable("x")
    net = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    ctx_list = [{"ctx": mx.cpu(), "x": (3, 5), "type_dict": {"x": np.float64}},
                {"ctx": mx.cpu(), "x": (3, 5), "type_dict": {"x": np.float32}}]
    gt = check_consistency(net, ctx_list)
    assert gt["fc_output"].dtype == np.float64 and set(gt) >= {"x_grad", "fc_weight_grad", "fc_bias_grad"}


def test_a_different_symbol_is_caught():
    x = mx.sym.Variable("x")
    ctx = {"ctx": mx.cpu(), "x": (4,)}
    with pytest.raises(AssertionError, match="check_consistency: output .* differs"):
        check_consistency([mx.sym.relu(x), mx.sym.abs(x)], ctx_list=[ctx, ctx], arg_params={"x": np.array([-1.0, 1,
                                                                                                         2, -3])})
    check_consistency([mx.sym.relu(x), mx.sym.abs(x)], ctx_list=[ctx, ctx], grad_req="null",
                      arg_params={"x": np.array([1.0, 2, 3, 4])})
