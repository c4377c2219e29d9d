"""Symbol <-> MXNet JSON, through :mod:`.json_format` (which owns the byte format).

>>> from mxasync import symbol as sym
>>> net = sym.Activation(sym.Variable("x"), act_type="relu", name="r")
>>> back = sym.load_json(net.tojson())
>>> back.tojson() == net.tojson(), back.list_outputs()
(True, ['r_output'])
"""

from __future__ import annotations

from ..base import MXAsyncError, os_error
from ..operator.registry import get_op
from ..util import is_np_shape
from ._json_format import JsonGraph, JsonNode, dump_graph, load_graph
from ._node import Node, topo_order

__all__ = ["to_json", "from_json", "load", "load_json", "to_graph", "from_graph"]


def to_graph(sym) -> JsonGraph:
    nodes = topo_order(sym._heads)
    index = {id(n): i for i, n in enumerate(nodes)}
    jnodes = [_json_node(n, [(index[id(e[0])], e[1], e[2]) for e in n.inputs]) for n in nodes]
    row = [0]
    for n in nodes:
        row.append(row[-1] + n.num_outputs())
    graph = JsonGraph(jnodes, [i for i, n in enumerate(nodes) if n.is_variable],
                      [(index[id(h[0])], h[1], h[2]) for h in sym._heads])
    graph.node_row_ptr = row
    if is_np_shape():  # MXNet marks a graph saved in NumPy-shape mode (its 0 dims are zero-size ones)
        graph.attrs = {"is_np_shape": ["int", 1], **graph.attrs}
    return graph


def _json_node(n: Node, inputs: list) -> JsonNode:
    """One node; an op that keeps MXNet's ``subgraphs`` field in a param (``json_subgraph``) writes it back there."""
    if n.is_variable:
        return JsonNode(op="null", name=n.name, attrs=dict(n.attrs), inputs=inputs)
    attrs = dict(n.attrs)
    field = n.op.prop_cls.json_subgraph
    subgraphs = []
    if field is not None and attrs.get(field):
        sub = load_graph(attrs.pop(field))
        sub.attrs = {}  # MXNet writes no attrs on a subgraph
        subgraphs.append(sub)
    return JsonNode(op=n.op.name, name=n.name, attrs=attrs, inputs=inputs, subgraphs=subgraphs)


def _subgraph_attrs(i: int, jn: JsonNode, op) -> dict:
    """The node's attrs, with its subgraph (MXNet's ``subgraphs`` field) as the param the op names."""
    if not jn.subgraphs:
        return jn.attrs
    field = None if op is None else op.prop_cls.json_subgraph
    if field is None or len(jn.subgraphs) != 1:
        raise MXAsyncError(f"symbol JSON node {i} ({jn.name!r}): op {jn.op} has {len(jn.subgraphs)} subgraphs, "
                           "which mxasync does not support")
    return {**jn.attrs, field: dump_graph(jn.subgraphs[0])}


def to_json(sym) -> str:
    return dump_graph(to_graph(sym))


def from_graph(graph: JsonGraph):
    from .symbol import Symbol

    nodes: list[Node] = []
    for i, jn in enumerate(graph.nodes):
        try:
            op = None if jn.is_variable else get_op(jn.op)
        except MXAsyncError as exc:
            raise MXAsyncError(f"symbol JSON node {i} ({jn.name!r}): {exc}") from None
        node = Node(op, jn.name, _subgraph_attrs(i, jn, op))
        for nid, idx, ver in jn.inputs:
            child = nodes[nid]
            child.version = max(child.version, ver) if child.is_variable else child.version
            node.inputs.append((child, idx, ver))
        if op is not None:
            try:
                prop = node.prop  # validate the params now, naming the node
            except MXAsyncError as exc:
                raise MXAsyncError(f"symbol JSON node {i} ({jn.name!r}): {exc}") from None
            wanted = [*prop.list_arguments(), *prop.list_auxiliary_states()]
            if len(jn.inputs) != len(wanted):
                raise MXAsyncError(f"symbol JSON node {i} ({jn.name!r}): {jn.op} takes {len(wanted)} inputs "
                                   f"({', '.join(wanted)}), but the node lists {len(jn.inputs)}")
        nodes.append(node)
    return Symbol([(nodes[n], i, v) for n, i, v in graph.heads])


def from_json(text: str):
    return from_graph(load_graph(text))


def load_json(json_str: str):
    """A symbol from MXNet JSON text (``sym.load_json``)."""
    return from_json(json_str)


def load(fname: str):
    """A symbol from a ``-symbol.json`` file (``sym.load``); errors name the file."""
    try:
        with open(fname, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise os_error(exc, f"cannot read symbol file {fname}: {exc.strerror or exc}", fname) from None
    try:
        return from_json(text)
    except MXAsyncError as exc:
        raise type(exc)(f"{fname}: {exc}") from None
