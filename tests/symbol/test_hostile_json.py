"""Hostile or broken symbol JSON gets an MXNetError naming the node, variable or file, never a bare error."""

from __future__ import annotations

import json

import pytest

import mxasync as mx


def _fc_json(shape=None) -> dict:
    data = mx.sym.Variable("data", shape=shape) if shape else mx.sym.Variable("data")
    return json.loads(mx.sym.FullyConnected(data, num_hidden=3, name="fc").tojson())


def _fc_node(g: dict) -> dict:
    return next(n for n in g["nodes"] if n["op"] == "FullyConnected")


def test_op_without_its_inputs():
    g = _fc_json()
    _fc_node(g)["inputs"] = []
    with pytest.raises(mx.MXNetError, match=r"node 3 \('fc'\): FullyConnected takes 3 inputs \(data, weight, bias\), "
                                            r"but the node lists 0"):
        mx.sym.load_json(json.dumps(g))


def test_input_refers_to_missing_output_of_variable():
    g = _fc_json()
    _fc_node(g)["inputs"][0] = [0, 7, 0]
    with pytest.raises(mx.MXNetError, match=r"refers to output 7 of node 0 \('data'\), which has 1 outputs"):
        mx.sym.load_json(json.dumps(g))


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}"])
def test_deep_nesting(text):
    with pytest.raises(mx.MXNetError, match="nested too deeply"):
        mx.sym.load_json(text)


@pytest.mark.parametrize("bad", ["(2, 3))(garbage", "__import__('os')", "(1.5, 2)", "(2, 'a')", "[1, 2", "abc"])
def test_garbage_shape_attribute(bad):
    g = _fc_json(shape=(2, 4))
    g["nodes"][0]["attrs"]["__shape__"] = bad
    sym = mx.sym.load_json(json.dumps(g))
    with pytest.raises(mx.MXNetError, match=r"variable 'data': its __shape__ attribute .* is not a shape"):
        sym.infer_shape()


@pytest.mark.parametrize("good, shape", [("(2, 4)", (2, 4)), ("[2, 4]", (2, 4)), ("(2L, 4L)", (2, 4))])
def test_shape_attribute_forms(good, shape):
    g = _fc_json(shape=(2, 4))
    g["nodes"][0]["attrs"]["__shape__"] = good
    assert mx.sym.load_json(json.dumps(g)).infer_shape()[0][0] == shape


def test_load_names_the_file(tmp_path):
    g = _fc_json()
    _fc_node(g)["inputs"] = []
    path = tmp_path / "net-symbol.json"
    path.write_text(json.dumps(g))
    with pytest.raises(mx.MXNetError, match=rf"^{path}: symbol JSON node 3"):
        mx.sym.load(str(path))
    with pytest.raises(FileNotFoundError, match=r"cannot read symbol file .*missing.json"):
        mx.sym.load(str(tmp_path / "missing.json"))
