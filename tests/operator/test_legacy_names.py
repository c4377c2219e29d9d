"""MXNet's legacy op names (``_Greater``, ``_ModScalar``, ``_grad_add``, ...), which symbol JSON files of old
MXNet releases use, name the same ops as MXNet 1.9 maps them (checked with MXNet 1.9.1's ``_internal``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator import get_op

LEGACY = {
    "_Equal": "_equal", "_Not_Equal": "_not_equal", "_Greater": "_greater", "_Greater_Equal": "_greater_equal",
    "_Lesser": "_lesser", "_Lesser_Equal": "_lesser_equal", "_Logical_And": "_logical_and",
    "_Logical_Or": "_logical_or", "_Logical_Xor": "_logical_xor", "_Mod": "_mod", "_grad_add": "elemwise_add",
    "_EqualScalar": "_equal_scalar", "_NotEqualScalar": "_not_equal_scalar", "_GreaterScalar": "_greater_scalar",
    "_GreaterEqualScalar": "_greater_equal_scalar", "_LesserScalar": "_lesser_scalar",
    "_LesserEqualScalar": "_lesser_equal_scalar", "_LogicalAndScalar": "_logical_and_scalar",
    "_LogicalOrScalar": "_logical_or_scalar", "_LogicalXorScalar": "_logical_xor_scalar",
    "_ModScalar": "_mod_scalar", "_RModScalar": "_rmod_scalar", "_HypotScalar": "_hypot_scalar",
}


@pytest.mark.parametrize("legacy,canon", sorted(LEGACY.items()))
def test_legacy_name_is_the_op(legacy, canon):
    assert get_op(legacy).name == get_op(canon).name


def test_old_json_with_legacy_names_loads_and_runs():
    nodes = [{"op": "null", "name": "a", "inputs": []}, {"op": "null", "name": "b", "inputs": []},
             {"op": "_Greater", "name": "g", "inputs": [[0, 0, 0], [1, 0, 0]]},
             {"op": "_ModScalar", "name": "m", "attrs": {"scalar": "3"}, "inputs": [[0, 0, 0]]},
             {"op": "_grad_add", "name": "s", "inputs": [[2, 0, 0], [3, 0, 0]]}]
    text = json.dumps({"nodes": nodes, "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 3, 4, 5],
                       "heads": [[4, 0, 0]], "attrs": {"mxnet_version": ["int", 10500]}})
    sym = mx.sym.load_json(text)
    a, b = np.array([1.0, 5.0, 7.0], np.float32), np.array([2.0, 2.0, 2.0], np.float32)
    out = sym.bind(mx.cpu(), {"a": mx.nd.array(a), "b": mx.nd.array(b)}).forward()[0].asnumpy()
    np.testing.assert_array_equal(out, (a > b) + np.mod(a, 3))
