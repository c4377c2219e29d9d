"""Issue 34, items 3, 5 and 6 (ONNX): the importer checks sizes before it allocates, refuses
external data outside the model's folder itself, and every refusal is an ``MXNetError`` naming
the file and the node or tensor (main: 300x inflation of a big attribute, bare
``IndexError``/``ValueError``, an empty file imported as an empty model)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mxasync as mx

pytestmark = pytest.mark.fault
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


def _save(path, nodes, inits=(), inputs=(X,)):
    graph = helper.make_graph(nodes, "g", list(inputs), [Y], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path.write_bytes(model.SerializeToString())
    return str(path)


def _import(path):
    return mx.contrib.onnx.import_model(path)


def test_a_huge_attribute_is_refused_naming_node_and_attribute(tmp_path):
    path = _save(tmp_path / "perm.onnx", [helper.make_node("Transpose", ["x"], ["y"], name="t",
                                                           perm=list(range(5000)))])
    with pytest.raises(mx.MXNetError, match=r"perm\.onnx: .*Transpose node 't': attribute 'perm' has 5000 values; "
                                            r"at most 1024"):
        _import(path)


def test_a_perm_that_is_no_permutation(tmp_path):
    path = _save(tmp_path / "p.onnx", [helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 0])])
    with pytest.raises(mx.MXNetError, match=r"Transpose node 't': attribute 'perm' \[0, 0\] is not a permutation"):
        _import(path)


def test_tensor_dims_that_disagree_with_its_data(tmp_path):
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    w.dims[:] = [100000, 100000]
    path = _save(tmp_path / "dims.onnx", [helper.make_node("Add", ["x", "w"], ["y"], name="a")], [w])
    with pytest.raises(mx.MXNetError, match=r"dims\.onnx: .*initializer 'w' has dims \[100000, 100000\] "
                                            r"\(10000000000 elements, 40000000000 bytes\) but holds 24 bytes"):
        _import(path)


def test_a_constant_too_big_to_compute(tmp_path):
    shape = numpy_helper.from_array(np.array([10**6, 10**6], np.int64), "s")
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], name="big"),
             helper.make_node("Add", ["x", "c"], ["y"], name="a")]
    with pytest.raises(mx.MXNetError, match=r"ConstantOfShape node 'big': a constant of shape \[1000000, 1000000\] "
                                            r"would take 4e\+12 bytes"):
        _import(_save(tmp_path / "c.onnx", nodes, [shape]))


def test_a_node_short_of_inputs_is_named(tmp_path):
    path = _save(tmp_path / "short.onnx", [helper.make_node("Add", ["x"], ["y"], name="a")])
    with pytest.raises(mx.MXNetError, match=r"short\.onnx: .*Add node 'a': it has 1 inputs"):
        _import(path)


@pytest.mark.parametrize("content", [b"", b"\x08\x07garbage\xff\xff"])
def test_an_empty_or_garbled_file_is_named(tmp_path, content):
    path = tmp_path / "m.onnx"
    path.write_bytes(content)
    with pytest.raises(mx.MXNetError, match=r"m\.onnx (is empty \(0 bytes\)|is not an ONNX model)"):
        _import(str(path))
    with pytest.raises(mx.MXNetError, match=r"m\.onnx"):
        mx.contrib.onnx.get_model_metadata(str(path))


def _external(tmp_path, location):
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    onnx.external_data_helper.set_external_data(w, location, 0, 24)
    w.ClearField("raw_data")
    model_dir = tmp_path / "model"
    model_dir.mkdir(exist_ok=True)
    return _save(model_dir / "m.onnx", [helper.make_node("Add", ["x", "w"], ["y"], name="a")], [w])


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/hostname", "sub/../../secret.bin"])
def test_external_data_outside_the_model_folder(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(b"s" * 24)
    with pytest.raises(mx.MXNetError, match=r"m\.onnx: .*tensor 'w': external data location .* is not a file name "
                                            r"inside the model's folder"):
        _import(_external(tmp_path, location))


def test_external_data_through_a_symlink_out_of_the_folder(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"s" * 24)
    path = _external(tmp_path, "link.bin")
    os.symlink(tmp_path / "secret.bin", tmp_path / "model" / "link.bin")
    with pytest.raises(mx.MXNetError, match=r"leads outside the model's folder"):
        _import(path)


def test_external_data_beyond_its_file(tmp_path):
    path = _external(tmp_path, "w.bin")
    (tmp_path / "model" / "w.bin").write_bytes(b"\0" * 10)
    with pytest.raises(mx.MXNetError, match=r"external data at offset 0, length 24 lies outside .*w\.bin \(10 bytes\)"):
        _import(path)


def test_external_data_inside_the_folder_loads(tmp_path):
    path = _external(tmp_path, "w.bin")
    (tmp_path / "model" / "w.bin").write_bytes(np.full((2, 3), 2.0, np.float32).tobytes())
    sym, args, _ = _import(path)
    np.testing.assert_array_equal(args["w"].asnumpy(), np.full((2, 3), 2.0, np.float32))
