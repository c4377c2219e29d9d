"""Issue 34, item 5: a symbol file whose node carries a huge number of unknown attributes loads with one
bounded warning (an op without params) or fails with one bounded error (an op with params); main gave a
warning per attribute, or an error message listing them all (31 MB, 115 s for 10^6)."""

from __future__ import annotations

import json
import warnings

import pytest

import mxasync as mx

pytestmark = pytest.mark.fault
N = 20_000


def _graph(op: str, attrs: dict) -> str:
    return json.dumps({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                 {"op": op, "name": "n", "inputs": [[0, 0, 0]], "attrs": attrs}],
                       "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]],
                       "attrs": {"mxnet_version": ["int", 10901]}})


def test_an_op_without_params_warns_once_for_all_its_unknown_attributes(tmp_path):
    path = tmp_path / "many-symbol.json"
    path.write_text(_graph("relu", {f"zzq{i}": "1" for i in range(N)}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sym = mx.sym.load(str(path))
        assert sym.infer_shape(x=(2, 3))[1] == [(2, 3)]
    mine = [w for w in caught if "zzq" in str(w.message)]
    assert len(mine) == 1, len(mine)
    text = str(mine[0].message)
    assert text.startswith("relu: the op takes no parameters; zzq0='1', zzq1='1'") and len(text) < 1000
    assert f"and {N - 5} more are ignored (as MXNet does)" in text


def test_an_op_with_params_refuses_them_in_a_bounded_message(tmp_path):
    path = tmp_path / "many-symbol.json"
    path.write_text(_graph("FullyConnected", {"num_hidden": "2", **{f"zzq{i}": "1" for i in range(N)}}))
    with pytest.raises(mx.MXNetError, match=rf"many-symbol\.json: symbol JSON node 1 \('n'\): FullyConnected\(n\): "
                                            rf"unknown parameter zzq0='1'; .* \({N} unknown parameters in all\)") as info:
        mx.sym.load(str(path)).infer_shape(x=(2, 3))
    assert len(str(info.value)) < 2000


def test_a_few_unknown_parameters_are_all_named():
    with pytest.raises(mx.MXNetError, match=r"FullyConnected\(\w+\): unknown parameter bogus='1'$"):
        mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, bogus=1)
