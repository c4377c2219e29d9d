"""ONNX files to symbols and parameters (MXNet 1.9.1's ``mx.contrib.onnx.import_model``).

Initializers become parameters named as in the file (arguments or auxiliary states, as the
ops that read them say); graph inputs that are not initializers are the data inputs. Each
ONNX node is translated by its entry in :mod:`.import_ops`.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from .. import symbol as sym_mod
from ..base import MXAsyncError
from ..ndarray import array
from .checks import check_model, load_external_data
from .export import _onnx

__all__ = ["import_model", "get_model_metadata", "GraphImporter"]


class GraphImporter:
    """The state of one import: tensors seen so far (symbols or constants) and the parameters."""

    def __init__(self, graph, opset: int):
        from onnx import numpy_helper

        self.opset = opset
        self.params: dict[str, np.ndarray] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.symbols: dict[str, Any] = {}
        self.shapes: dict[str, tuple] = {}
        self.shape_of: dict[str, Any] = {}  # tensors computed as Shape(x): x's symbol
        self._names: set[str] = set()
        for t in graph.initializer:
            if not t.name.strip():
                raise ValueError("Tensor's name is required.")
            value = numpy_helper.to_array(t)
            self.consts[t.name] = value
            self.shapes[t.name] = value.shape
        for i in graph.input:
            if i.name in self.consts:
                continue
            self.symbols[i.name] = sym_mod.Variable(i.name)
        for v in list(graph.input) + list(graph.value_info) + list(graph.output):
            if v.name not in self.consts and v.type.tensor_type.HasField("shape"):
                self.shapes[v.name] = tuple(d.dim_value if d.HasField("dim_value") else 0
                                            for d in v.type.tensor_type.shape.dim)

    # -- what translators use ----------------------------------------------------------------------
    def sym(self, name: str):
        """The symbol of tensor ``name``; a constant becomes a parameter variable on first use."""
        s = self.symbols.get(name)
        if s is None:
            if name not in self.consts:
                raise MXAsyncError(f"ONNX import: tensor {name!r} is read before it is computed")
            s = self.symbols[name] = self.param(name, self.consts[name])
        return s

    def param(self, name: str, value: np.ndarray):
        """A new parameter variable holding ``value``."""
        self.params[name] = np.asarray(value)
        return sym_mod.Variable(name, shape=tuple(np.shape(value)))

    def const(self, name: str) -> np.ndarray | None:
        return self.consts.get(name) if name else None

    def unique(self, name: str) -> str | None:
        if not name:
            return None
        name = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
        base, i = name, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def fail(self, node, message: str) -> MXAsyncError:
        return MXAsyncError(f"ONNX import: {node.op_type} node {node.name!r}: {message}")

    # -- the walk --------------------------------------------------------------------------------
    def run(self, graph):
        from onnx import helper

        from .import_ops import TRANSLATORS

        for node in graph.node:
            fn = TRANSLATORS.get(node.op_type)
            if fn is None:
                raise MXAsyncError(f"ONNX import: operator {node.op_type} (node {node.name!r}) is not supported")
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            attrs = {k: (v.decode(errors="replace") if isinstance(v, bytes) else v) for k, v in attrs.items()}
            try:
                result = fn(self, node, attrs)
            except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError, OverflowError) as e:
                if isinstance(e, MXAsyncError):
                    raise
                if isinstance(e, IndexError) and "list index" in str(e):
                    raise self.fail(node, f"it has {len(node.input)} inputs and {len(node.output)} outputs, "
                                          f"fewer than {node.op_type} needs") from e
                raise self.fail(node, f"{type(e).__name__}: {e}") from e
            if result is None:  # the translator recorded constants itself
                continue
            outs = [result] if not isinstance(result, (list, tuple)) else list(result)
            for name, value in zip(node.output, outs, strict=False):
                if name:
                    self.symbols[name] = value
        heads = [self.sym(o.name) for o in graph.output]
        out = heads[0] if len(heads) == 1 else sym_mod.Group(heads)
        arg = {n: array(self.params[n]) for n in out.list_arguments() if n in self.params}
        aux = {n: array(self.params[n]) for n in out.list_auxiliary_states() if n in self.params}
        return out, arg, aux


def _load(model_file):
    """The checked ModelProto of ``model_file`` (a path or a ModelProto), its external data read."""
    onnx = _onnx()
    from google.protobuf.message import DecodeError

    if isinstance(model_file, (str, os.PathLike)):
        path = os.fspath(model_file)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise MXAsyncError(f"ONNX import: cannot read {path}: {e.strerror or e}") from e
        if not data:
            raise MXAsyncError(f"ONNX import: {path} is empty (0 bytes), not an ONNX model")
        model = onnx.ModelProto()
        try:
            model.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError) as e:
            raise MXAsyncError(f"ONNX import: {path} is not an ONNX model (it does not parse: {e})") from e
        folder = os.path.dirname(os.path.abspath(path))
    else:
        model, folder = model_file, None
    if not model.graph.output:
        raise MXAsyncError("ONNX import: the model has no graph outputs (an empty or truncated file?)")
    check_model(model)
    load_external_data(model, folder)
    return model


def _named(model_file, fn):
    """Run ``fn()``; an error names the file it came from."""
    try:
        return fn()
    except MXAsyncError as e:
        if not isinstance(model_file, (str, os.PathLike)) or os.fspath(model_file) in str(e):
            raise
        raise MXAsyncError(f"{os.fspath(model_file)}: {e}") from e


def _with_shapes(model):
    """The model with ONNX's inferred shapes in ``value_info`` (static ones let shape arithmetic fold)."""
    onnx = _onnx()
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is a help, not a requirement
        return model


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of the ONNX model in ``model_file`` (a path or a ModelProto)."""
    def run():
        model = _with_shapes(_load(model_file))
        opset = max([x.version for x in model.opset_import if x.domain in ("", "ai.onnx")] or [1])
        return GraphImporter(model.graph, opset).run(model.graph)

    return _named(model_file, run)


def get_model_metadata(model_file) -> dict:
    """``{'input_tensor_data': [(name, shape, onnx_type)], 'output_tensor_data': [(name, shape)]}``."""
    graph = _named(model_file, lambda: _load(model_file)).graph
    params = {t.name for t in graph.initializer}

    def shape(v):
        return tuple(d.dim_value for d in v.type.tensor_type.shape.dim)

    inputs = [(i.name, shape(i), i.type.tensor_type.elem_type) for i in graph.input if i.name not in params]
    return {"input_tensor_data": inputs, "output_tensor_data": [(o.name, shape(o)) for o in graph.output]}
