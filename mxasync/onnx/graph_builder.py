"""The ONNX graph under construction, and the per-node builder that converters receive.

:class:`GraphBuilder` walks a symbol's nodes in order and calls each op's converter (found on
its registry entry, ``OperatorProperty.onnx_export``) with a :class:`NodeBuilder`, the
implementation of :class:`mxasync.operator.onnx_protocol.OnnxBuilder`. Tensor names follow
MXNet's exporter: a node's output 0 is named after the node, output ``i`` ``name + str(i)``.
Nodes whose inputs are all constant are computed here and written as initializers (Gluon's
RNN layers build their parameter vector this way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..base import MXAsyncError
from ..ndarray import array
from ..ndarray._invoke import invoke
from ..symbol._node import op_params

__all__ = ["GraphBuilder", "NodeBuilder", "onnx_dtype"]


def onnx_dtype(dtype: Any) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class GraphBuilder:
    """Nodes, initializers and names of the graph being written."""

    def __init__(self, opset: int, dynamic: bool):
        self.opset, self.dynamic = opset, dynamic
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.consts: dict[str, np.ndarray] = {}     # tensor name -> value, for every constant tensor
        self.names: set[str] = set()

    def unique(self, hint: str) -> str:
        name, i = hint, 0
        while name in self.names:
            i += 1
            name = f"{hint}_{i}"
        self.names.add(name)
        return name

    def add_initializer(self, name: str, value: np.ndarray) -> str:
        self.initializers[name] = value
        self.consts[name] = value
        return name

    def make_node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], name: str,
                  attrs: dict) -> None:
        conv = {}
        for k, v in attrs.items():
            if isinstance(v, np.dtype):
                v = onnx_dtype(v)
            elif isinstance(v, np.ndarray):
                v = numpy_helper.from_array(v, f"{name}_{k}")
            conv[k] = v
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=name, **conv))

    def convert(self, node, inputs: list[str], outputs: list[str], in_shapes: list, in_dtypes: list,
                out_shapes: list) -> None:
        """Run ``node``'s converter (or fold it when every input is constant)."""
        if inputs and all(i in self.consts for i in inputs):
            if self._fold(node, inputs, outputs):
                return
        convert = node.op.prop_cls.onnx_export
        if convert is None:
            raise MXAsyncError(f"ONNX export: operator {node.op.name} (node {node.name!r}) has no ONNX converter; "
                               f"see docs/onnx.md for the exported operators")
        convert(NodeBuilder(self, node, inputs, outputs, in_shapes, in_dtypes, out_shapes))

    def _fold(self, node, inputs: list[str], outputs: list[str]) -> bool:
        try:
            arrays = [array(self.consts[i], dtype=self.consts[i].dtype) for i in inputs]
            res = invoke(node.op.name, arrays, **op_params(node.attrs))
        except Exception:  # noqa: BLE001 - an op that cannot run here is converted instead
            return False
        res = res if isinstance(res, (list, tuple)) else [res]
        for name, value in zip(outputs, res, strict=False):
            self.add_initializer(name, value.asnumpy())
        return True

    def prune(self, keep: Sequence[str]) -> None:
        """Drop the nodes and initializers that no kept tensor depends on."""
        needed = set(keep)
        kept = []
        for n in reversed(self.nodes):
            if any(o in needed for o in n.output):
                kept.append(n)
                needed.update(i for i in n.input if i)
        self.nodes = kept[::-1]
        self.initializers = {k: v for k, v in self.initializers.items() if k in needed}


class NodeBuilder:
    """:class:`~mxasync.operator.onnx_protocol.OnnxBuilder` for one node."""

    def __init__(self, graph: GraphBuilder, node, inputs: list[str], outputs: list[str], in_shapes: list,
                 in_dtypes: list, out_shapes: list):
        self._g, self._node = graph, node
        self.name, self.op_name = node.name, node.op.name
        self.params = node.prop.params
        self.inputs, self.outputs = inputs, outputs
        self.opset, self.dynamic = graph.opset, graph.dynamic
        self._in_shapes, self._in_dtypes, self._out_shapes = in_shapes, in_dtypes, out_shapes

    def in_shape(self, i: int) -> tuple[int, ...]:
        return tuple(self._in_shapes[i])

    def in_dtype(self, i: int) -> np.dtype:
        return np.dtype(self._in_dtypes[i])

    def out_shape(self, i: int) -> tuple[int, ...]:
        return tuple(self._out_shapes[i])

    def const_value(self, i: int) -> np.ndarray | None:
        return self._g.consts.get(self.inputs[i])

    def const(self, value: Any, hint: str = "const", dtype: Any = None) -> str:
        arr = np.asarray(value, dtype=dtype)
        return self._g.add_initializer(self._g.unique(f"{self.name}_{hint}"), arr)

    def add(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | None = None, n_out: int = 1,
            **attrs: Any) -> list[str]:
        if outputs is None:
            outputs = [self._g.unique(f"{self.name}_{op_type.lower()}") for _ in range(n_out)]
        self._g.make_node(op_type, inputs, outputs, self._g.unique(f"{self.name}_{op_type}"), attrs)
        return list(outputs)

    def set_const(self, index: int, value: np.ndarray) -> None:
        self._g.consts[self.outputs[index]] = np.asarray(value)

    def fail(self, message: str) -> Exception:
        return MXAsyncError(f"ONNX export: {self.op_name}({self.name}): {message}")
