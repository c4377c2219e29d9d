"""A symbol as an editable node list (MXNet's JSON layout), the form the quantization passes rewrite.

Each node is a dict ``{"op", "name", "attrs", "inputs"}`` with inputs as ``[node_index,
output_index, version]``; ``heads`` are the graph outputs.  Passes build a new list in
topological order with :class:`GraphBuilder` and turn it back into a Symbol.
"""

from __future__ import annotations

import json
from collections import defaultdict

from ...symbol import load_json

__all__ = ["Graph", "GraphBuilder", "entry_name"]


class Graph:
    def __init__(self, nodes: list[dict], heads: list[list[int]]):
        self.nodes = nodes
        self.heads = heads

    @classmethod
    def from_symbol(cls, sym) -> Graph:
        g = json.loads(sym.tojson())
        nodes = [{"op": n["op"], "name": n["name"], "attrs": dict(n.get("attrs", {})),
                  "inputs": [list(e) for e in n["inputs"]], **({"subgraphs": n["subgraphs"]} if n.get("subgraphs")
                                                                 else {})} for n in g["nodes"]]
        return cls(nodes, [list(h) for h in g["heads"]])

    def to_symbol(self):
        arg_nodes = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        return load_json(json.dumps({"nodes": self.nodes, "arg_nodes": arg_nodes, "heads": self.heads,
                                     "attrs": {"mxnet_version": ["int", 10901]}}))

    def consumers(self) -> dict[tuple[int, int], list[tuple[int, int]]]:
        """(node, output) -> [(consumer node, input position)], a graph output as (-1, head position)."""
        out = defaultdict(list)
        for i, n in enumerate(self.nodes):
            for pos, (src, idx, _) in enumerate(n["inputs"]):
                out[(src, idx)].append((i, pos))
        for pos, (src, idx, _) in enumerate(self.heads):
            out[(src, idx)].append((-1, pos))
        return out


def entry_name(node: dict, index: int) -> str:
    """The name MXNet's monitor gives an output: a variable's name, else ``<node>_output`` (its first)."""
    if node["op"] == "null":
        return node["name"]
    return f"{node['name']}_output" if index == 0 else f"{node['name']}_output{index}"


class GraphBuilder:
    """Appends nodes in topological order; ``add`` returns the new node's index."""

    def __init__(self):
        self.nodes: list[dict] = []

    def add(self, op: str, name: str, inputs: list, attrs: dict | None = None, subgraphs=None) -> int:
        node = {"op": op, "name": name, "attrs": {k: str(v) for k, v in (attrs or {}).items()},
                "inputs": [list(e) if len(e) == 3 else [e[0], e[1], 0] for e in inputs]}
        if subgraphs:
            node["subgraphs"] = subgraphs
        self.nodes.append(node)
        return len(self.nodes) - 1

    def variable(self, name: str, attrs: dict | None = None) -> int:
        return self.add("null", name, [], attrs)
