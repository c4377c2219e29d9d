"""topk / argsort / sort order equal values as MXNet 1.9.1's CPU kernels (libstdc++'s std::sort and
std::partial_sort, neither stable): every case of tests/fixtures/mxnet/tie_order.json, recorded from MXNet
by make_tie_order.py, gives MXNet's positions."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.kernels.stl_sort import mxnet_order

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "mxnet" / "tie_order.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[f"{len(c['x'])}x{len(c['x'][0])}-k{c['k']}" for c in CASES])
def test_positions_of_equal_values_are_mxnets(case):
    x = mx.nd.array(np.array(case["x"], np.float32))
    k, asc = case["k"], case["is_ascend"]
    assert mx.nd.topk(x, k=k, is_ascend=asc).asnumpy().astype(int).tolist() == case["topk"]
    assert mx.nd.argsort(x, is_ascend=asc).asnumpy().astype(int).tolist() == case["argsort"]
    assert mx.nd.sort(x, is_ascend=asc).asnumpy().tolist() == case["sort"]
    assert mx.nd.topk(x.T, k=k, axis=0, is_ascend=asc).asnumpy().astype(int).tolist() == case["topk_axis0"]


def test_distinct_values_and_the_emulation_agree_with_a_plain_sort():
    rs = np.random.RandomState(0)
    v = rs.permutation(300).astype(np.float64)
    assert mxnet_order(v, 300, ascend=True).tolist() == np.argsort(v).tolist()
    assert mxnet_order(v, 7, ascend=False).tolist() == np.argsort(-v)[:7].tolist()
