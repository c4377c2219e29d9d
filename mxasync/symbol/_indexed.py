"""``IndexedGraph``: a symbol's nodes in topological order with integer entry ids.

Entry ``(node i, output k)`` has id ``entry_ptr[i] + k``; the inference passes
and the executor work on these ids.
"""

from __future__ import annotations

from bisect import bisect_right

from ._node import Node, topo_order

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
        self._split: list = [None] * len(self.nodes)  # split_inputs per node, computed on first use
        self.inferred: dict[str, list] = {}  # the last inference per kind ("shape", "type"), reused by bind
        self.heads = [self.eid(h) for h in sym._heads]
        mutable: set[int] = set()
        for _i, n in enumerate(self.nodes):
            for pos in n.mutable_positions():
                child = self.node_id[id(n.inputs[pos][0])]
                if self.nodes[child].is_variable:
                    mutable.add(child)
        self.input_nodes = [i for i, n in enumerate(self.nodes) if n.is_variable]
        self.arg_nodes = [i for i in self.input_nodes if i not in mutable]
        self.arg_index = {nid: k for k, nid in enumerate(self.arg_nodes)}
        self.aux_nodes = [i for i in self.input_nodes if i in mutable]

    def eid(self, entry) -> int:
        return self.entry_ptr[self.node_id[id(entry[0])]] + entry[1]

    def entry_name(self, eid: int) -> str:
        """``fc1_output``, or a variable's name."""
        if not 0 <= eid < self.num_entries:
            raise IndexError(eid)
        i = bisect_right(self.entry_ptr, eid) - 1  # entry_ptr is non-decreasing: log n, not a scan
        return self.nodes[i].output_name(eid - self.entry_ptr[i])

    def split_inputs(self, nid: int) -> tuple[list[int], list[int]]:
        """The node's argument entry ids and aux entry ids (cached: the passes ask per node and sweep)."""
        split = self._split[nid]
        if split is None:
            ins = self.inputs[nid]
            n = self.nodes[nid].num_args()
            split = self._split[nid] = (ins[:n], ins[n:])
        return split
