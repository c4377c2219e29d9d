"""``IndexedGraph``: a symbol's nodes in topological order with integer entry ids.

Entry ``(node i, output k)`` has id ``entry_ptr[i] + k``; the inference passes
and the executor work on these ids.
"""

from __future__ import annotations

from .node import Node, topo_order

__all__ = ["IndexedGraph"]


class IndexedGraph:
    def __init__(self, sym):
        self.symbol = sym
        self.nodes: list[Node] = topo_order(sym._heads)
        self.node_id = {id(n): i for i, n in enumerate(self.nodes)}
        ptr = [0]
        for n in self.nodes:
            ptr.append(ptr[-1] + n.num_outputs())
        self.entry_ptr = ptr
        self.num_entries = ptr[-1]
        self.inputs: list[list[int]] = [[self.eid(e) for e in n.inputs] for n in self.nodes]
        self.heads = [self.eid(h) for h in sym._heads]
        mutable: set[int] = set()
        for _i, n in enumerate(self.nodes):
            for pos in n.mutable_positions():
                child = self.node_id[id(n.inputs[pos][0])]
                if self.nodes[child].is_variable:
                    mutable.add(child)
        self.input_nodes = [i for i, n in enumerate(self.nodes) if n.is_variable]
        self.arg_nodes = [i for i in self.input_nodes if i not in mutable]
        self.aux_nodes = [i for i in self.input_nodes if i in mutable]

    def eid(self, entry) -> int:
        return self.entry_ptr[self.node_id[id(entry[0])]] + entry[1]

    def entry_name(self, eid: int) -> str:
        """``fc1_output``, or a variable's name."""
        for i in range(len(self.nodes)):
            if self.entry_ptr[i] <= eid < self.entry_ptr[i + 1]:
                return self.nodes[i].output_name(eid - self.entry_ptr[i])
        raise IndexError(eid)

    def split_inputs(self, nid: int) -> tuple[list[int], list[int]]:
        """The node's argument entry ids and aux entry ids."""
        ins = self.inputs[nid]
        n = self.nodes[nid].num_args()
        return ins[:n], ins[n:]
