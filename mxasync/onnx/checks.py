"""What an ONNX file may hold before the importer reads it: sizes checked against the bytes
that are really there, bounded attribute lists, and external data kept inside the model's folder.

An ONNX file may come from anyone (a model zoo, a colleague), so every count it states is
checked before anything of that size is allocated, and every refusal is an ``MXNetError``
naming the file, the node and the attribute or tensor. External-data paths are checked here
rather than left to onnx, whose own refusal of ``../`` paths came only in recent versions.

>>> check_attribute_count("Transpose", "t", "perm", 3)
>>> check_attribute_count("Transpose", "t", "perm", 10**7)
Traceback (most recent call last):
...
mxasync.base.MXAsyncError: ONNX import: Transpose node 't': attribute 'perm' has 10000000 values; at most 1024 are accepted
"""

from __future__ import annotations

import os

import numpy as np

from ..base import MXAsyncError

__all__ = ["MAX_ATTRIBUTE_VALUES", "MAX_CONSTANT_BYTES", "check_attribute_count", "check_model",
           "check_tensor", "load_external_data"]

MAX_ATTRIBUTE_VALUES = 1024  # perm, axes, pads, kernel_shape ...: a few per dimension
MAX_CONSTANT_BYTES = 1 << 31  # a constant the importer computes itself (ConstantOfShape, folding)
_STRING_BYTES = 1 << 20

# TensorProto.DataType -> (numpy itemsize of the data, the typed field holding it, values per element there)
_LAYOUT = {
    1: (4, "float_data", 1), 2: (1, "int32_data", 1), 3: (1, "int32_data", 1), 4: (2, "int32_data", 1),
    5: (2, "int32_data", 1), 6: (4, "int32_data", 1), 7: (8, "int64_data", 1), 8: (None, "string_data", 1),
    9: (1, "int32_data", 1), 10: (2, "int32_data", 1), 11: (8, "double_data", 1), 12: (4, "uint64_data", 1),
    13: (8, "uint64_data", 1), 14: (8, "float_data", 2), 15: (16, "double_data", 2), 16: (2, "int32_data", 1),
}


def _where(node) -> str:
    return f"{node.op_type} node {node.name!r}" if node is not None else "graph"


def check_attribute_count(op_type: str, node_name: str, attr: str, n: int) -> None:
    if n > MAX_ATTRIBUTE_VALUES:
        raise MXAsyncError(f"ONNX import: {op_type} node {node_name!r}: attribute {attr!r} has {n} values; "
                           f"at most {MAX_ATTRIBUTE_VALUES} are accepted")


def check_tensor(t, node=None, what: str = "tensor") -> None:
    """``t`` (a ``TensorProto``) holds exactly the data its dims and type state."""
    where = f"ONNX import: {_where(node)}: {what} {t.name!r}"
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise MXAsyncError(f"{where} has negative dims {dims}")
    n = 1
    for d in dims:
        n *= d
    layout = _LAYOUT.get(t.data_type)
    if layout is None:
        raise MXAsyncError(f"{where} has data type {t.data_type}, which the importer does not read")
    itemsize, field, per = layout
    if t.data_location == 1:  # EXTERNAL: checked against its file in load_external_data
        return
    if t.HasField("raw_data"):
        if itemsize is None:
            raise MXAsyncError(f"{where}: a string tensor cannot have raw data")
        have, want = len(t.raw_data), n * itemsize
        unit = "bytes"
    else:
        have, want = len(getattr(t, field)), n * per
        unit = "values"
    if have != want:
        raise MXAsyncError(f"{where} has dims {dims} ({n} elements, {want} {unit}) but holds {have} {unit}")


def _check_attributes(node) -> None:
    for a in node.attribute:
        what = f"attribute {a.name!r}"
        if a.HasField("t"):
            check_tensor(a.t, node, what)
        for t in a.tensors:
            check_tensor(t, node, what)
        if node.op_type != "Constant":  # Constant's value_* lists become one array, as a tensor would
            for values in (a.ints, a.floats, a.strings, a.tensors, a.graphs):
                check_attribute_count(node.op_type, node.name, a.name, len(values))
        if len(a.s) > _STRING_BYTES or any(len(s) > _STRING_BYTES for s in a.strings):
            raise MXAsyncError(f"ONNX import: {_where(node)}: {what} holds a string over {_STRING_BYTES} bytes")


def check_model(model) -> None:
    """Check every initializer and node attribute of ``model``'s graph (see the module docstring)."""
    graph = model.graph
    for t in graph.initializer:
        check_tensor(t, None, "initializer")
    for node in graph.node:
        _check_attributes(node)


def _external_tensors(model):
    yield from model.graph.initializer
    for node in model.graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors


def load_external_data(model, folder: str | None) -> None:
    """Read the external data of ``model``'s tensors from files inside ``folder`` (the model's own
    folder), checking location, offset and length; a ``ModelProto`` given without a path
    (``folder`` None) may not point to external data."""
    for t in _external_tensors(model):
        if t.data_location != 1:
            continue
        info = {e.key: e.value for e in t.external_data}
        where = f"ONNX import: tensor {t.name!r}"
        location = info.get("location", "")
        if folder is None:
            raise MXAsyncError(f"{where} keeps its data in the external file {location!r}: give the model's path, "
                               f"not a loaded ModelProto, so the file is looked for beside it")
        norm = os.path.normpath(location)
        if not location or os.path.isabs(location) or norm == ".." or norm.startswith(".." + os.sep) \
                or "\0" in location:
            raise MXAsyncError(f"{where}: external data location {location!r} is not a file name inside the "
                               f"model's folder {folder}")
        path = os.path.join(folder, norm)
        real_folder = os.path.realpath(folder)
        if os.path.commonpath([os.path.realpath(path), real_folder]) != real_folder:
            raise MXAsyncError(f"{where}: external data location {location!r} leads outside the model's folder "
                               f"{folder} (through a symbolic link)")
        try:
            offset = int(info.get("offset", 0))
            length = int(info["length"]) if "length" in info else None
        except ValueError as e:
            raise MXAsyncError(f"{where}: external data offset/length are not numbers: {e}") from e
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if length is None:
                    length = size - offset
                if offset < 0 or length < 0 or offset + length > size:
                    raise MXAsyncError(f"{where}: external data at offset {offset}, length {length} lies outside "
                                       f"{path} ({size} bytes)")
                f.seek(offset)
                t.raw_data = f.read(length)
        except OSError as e:
            raise MXAsyncError(f"{where}: cannot read its external data {path}: {e.strerror or e}") from e
        del t.external_data[:]
        t.data_location = 0
        check_tensor(t, None, "tensor")


def check_constant(node, shape, dtype) -> None:
    """A constant the importer would compute (ConstantOfShape) stays under ``MAX_CONSTANT_BYTES``."""
    n = 1
    for d in shape:
        if d < 0:
            raise MXAsyncError(f"ONNX import: {_where(node)}: negative dimension in shape {list(shape)}")
        n *= d
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > MAX_CONSTANT_BYTES:
        raise MXAsyncError(f"ONNX import: {_where(node)}: a constant of shape {list(shape)} would take "
                           f"{nbytes:.3g} bytes (at most {MAX_CONSTANT_BYTES})")
