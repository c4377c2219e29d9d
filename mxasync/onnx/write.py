"""A symbol's indexed graph, with inferred shapes and types, to an ONNX ``GraphProto``."""

from __future__ import annotations

import logging

import numpy as np
from onnx import GraphProto, helper, numpy_helper

from ..base import MXAsyncError
from .graph_builder import GraphBuilder, onnx_dtype

__all__ = ["build_graph"]

log = logging.getLogger(__name__)


def build_graph(g, weights: dict[str, np.ndarray], data_names: list[str], graph_in_shapes: list, label: str,
                opset: int, dynamic: bool, initializers_as_inputs: bool, verbose: bool) -> GraphProto:
    shapes, types = g.inferred["shape"], g.inferred["type"]
    gb = GraphBuilder(opset, dynamic)
    names: dict[int, str] = {}  # entry id -> tensor name
    inputs = []
    data_shape = dict(zip(data_names, graph_in_shapes, strict=True))
    for nid, node in enumerate(g.nodes):
        base = g.entry_ptr[nid]
        if node.is_variable:
            names[base] = gb.unique(node.name)
            if node.name in data_shape:
                inputs.append(helper.make_tensor_value_info(names[base], onnx_dtype(types[base]),
                                                            list(data_shape[node.name])))
            elif node.name in weights:
                gb.add_initializer(names[base], weights[node.name])
            continue  # else the output layer's label: dropped, as MXNet's exporter drops it
        n_out = node.num_outputs()
        first = gb.unique(node.name)
        outs = [first] + [gb.unique(f"{node.name}{k}") for k in range(1, n_out)]
        for k, name in enumerate(outs):
            names[base + k] = name
        ins = [names[e] for e in g.inputs[nid]]
        if verbose:
            log.info("Converting idx: %d, op: %s, name: %s", nid, node.op.name, node.name)
        missing = [g.entry_name(e) for e in g.inputs[nid] if shapes[e] is None]
        if missing:
            raise MXAsyncError(f"ONNX export: {node.op.name}({node.name}): the shapes of {missing} are unknown; "
                               f"give every data input's shape in in_shapes")
        gb.convert(node, ins, outs, [shapes[e] for e in g.inputs[nid]], [types[e] for e in g.inputs[nid]],
                   [shapes[base + k] for k in range(n_out)])
    out_names = [names[e] for e in g.heads]
    outputs = []
    for e, name in zip(g.heads, out_names, strict=True):
        shape = [None] * len(shapes[e]) if dynamic else list(shapes[e])
        outputs.append(helper.make_tensor_value_info(name, onnx_dtype(types[e]), shape))
    gb.prune(out_names)
    _check_complete(gb, {i.name for i in inputs}, g)
    inits = [numpy_helper.from_array(np.ascontiguousarray(v), k) for k, v in gb.initializers.items()]
    if initializers_as_inputs:
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    return helper.make_graph(gb.nodes, "mxnet_converted_model", inputs, outputs, inits)


def _check_complete(gb: GraphBuilder, graph_inputs: set[str], g) -> None:
    have = set(graph_inputs) | set(gb.initializers) | {""}
    for n in gb.nodes:
        for i in n.input:
            if i not in have:
                raise MXAsyncError(f"ONNX export: node {n.name} ({n.op_type}) reads {i!r}, which no converter "
                                   f"produced (an op output that has no ONNX form, such as a hidden state)")
        have.update(n.output)
