"""The recorded tape as a graph, so that ``backward()`` runs the executor's gradient pass.

MXNet's ``Imperative::Backward`` turns the recorded nodes into a graph and runs the same
gradient pass bound graphs use.  :class:`TapeGraph` does that: it numbers the entries of the
nodes reachable from the heads (outputs of recorded nodes, and one variable node per array that
no recorded node made: a variable with ``attach_grad``, or a constant) with the interface
:func:`~mxasync.autograd.gradient.build_backward` reads (``nodes``, ``entry_ptr``,
``split_inputs``, ``heads``), and keeps each entry's array.

A node whose op is a stand-in (a hybridized block's graph node, an ``autograd.Function``, a link
of a higher-order graph: a ``TapeOp`` with ``tape_backward``) is seen by the pass through
:class:`_StandIn`: it reads every output gradient and offers no in-place option.
"""

from __future__ import annotations

from .gradient import EntryInfo

__all__ = ["TapeGraph"]


class _StandIn:
    """What the gradient pass asks of an op, for a ``TapeOp`` that is not an ``OperatorProperty``
    (one per input count: the pass keeps facts of the ops it met, so it must not hold the node)."""

    non_differentiable = False
    zero_gradient = False
    label = "a recorded block or function"
    _made: dict = {}

    def __init__(self, n_in: int):
        self.n_in = n_in

    @classmethod
    def of(cls, n_in: int) -> _StandIn:
        got = cls._made.get(n_in)
        if got is None:
            got = cls._made[n_in] = cls(n_in)
        return got

    def list_arguments(self) -> list[str]:
        return [f"in{k}" for k in range(self.n_in)]

    def declare_backward_dependency(self, out_grad, in_data, out_data) -> list:
        return list(out_grad)

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad) -> list:
        return []


class _GraphNode:
    """A node of the tape graph: a variable (``tape`` None) or a recorded node."""

    __slots__ = ("tape", "prop", "name", "n_out")

    def __init__(self, tape, name: str, n_out: int = 1):
        self.tape, self.name, self.n_out = tape, name, n_out
        if tape is None:
            self.prop = None
        elif tape.prop.tape_backward is not None:
            self.prop = _StandIn.of(len(tape.inputs))
        else:
            self.prop = tape.prop

    @property
    def is_variable(self) -> bool:
        return self.tape is None

    def num_outputs(self) -> int:
        return self.n_out


class TapeGraph:
    """The graph of ``nodes`` (recorded nodes reachable from ``heads``, oldest first).

    What every backward needs (the entries' arrays, the recorded node of each graph node) is
    built here; what only the gradient pass reads (``nodes``, ``entries``) is built when it
    runs, which is once per tape structure (a training loop's steps reuse its result).
    """

    def __init__(self, nodes: list, heads: list):
        self.tape_nodes: list = []  # per graph node: the recorded node, or None for a variable
        self.entry_ptr = [0]
        self.arrays: list = []  # per entry: its array
        self.variables: dict = {}  # node id -> the autograd Entry of a variable (an attach_grad'ed array)
        self._inputs: list[tuple[list[int], list[int]]] = []
        self._var_of: dict[int, int] = {}  # id(autograd entry or constant array) -> node id
        self._out_of: dict[int, int] = {}  # id(recorded node) -> node id
        shape = []  # what the gradient pass reads of the graph: its structure, for reusing its result
        for node in nodes:
            args = [self._entry(x, e) for x, e in zip(node.inputs, node.in_ag, strict=True)]
            aux = [self._entry(a, None) for a in node.aux]
            nid = self._add(node, node.outputs, (args, aux))
            self._out_of[id(node)] = nid
            prop = node.prop
            shape.append((nid, prop if prop.tape_backward is None else len(args), tuple(args), len(node.outputs)))
        self.heads = [self._entry(h, h._ag) for h in heads]
        self.num_entries = self.entry_ptr[-1]
        #: equal for two tapes whose gradient pass gives the same ops (a training loop's iterations):
        #: the op nodes' props and wiring (a stand-in counts by its inputs), the variables, the heads
        self.structure = (tuple(shape), tuple(self.variables), tuple(self.heads), self.num_entries)
        self._nodes: list | None = None

    def _add(self, tape_node, arrays: list, inputs) -> int:
        nid = len(self.tape_nodes)
        self.tape_nodes.append(tape_node)
        self._inputs.append(inputs)
        self.arrays.extend(arrays)
        self.entry_ptr.append(self.entry_ptr[-1] + len(arrays))
        return nid

    def _entry(self, arr, ag) -> int:
        """The entry of input ``arr`` recorded with autograd entry ``ag`` (None: a constant)."""
        if ag is not None and ag.node is not None:
            nid = self._out_of.get(id(ag.node))
            if nid is not None:
                return self.entry_ptr[nid] + ag.index
            ag = None  # made by a node outside this graph (freed, or not recorded): a constant here
        key = id(ag) if ag is not None else id(arr)
        nid = self._var_of.get(key)
        if nid is None:
            nid = self._var_of[key] = self._add(None, [arr], ([], []))
            if ag is not None:
                self.variables[nid] = ag
        return self.entry_ptr[nid]

    # -- what the gradient pass reads ------------------------------------------------------
    @property
    def nodes(self) -> list[_GraphNode]:
        if self._nodes is None:
            self._nodes = [_GraphNode(t, f"{t.prop.op_name}{t.seq}" if t is not None else f"var{nid}",
                                      len(t.outputs) if t is not None else 1)
                           for nid, t in enumerate(self.tape_nodes)]
        return self._nodes

    def entries(self) -> list[EntryInfo]:
        """Per entry: shape, dtype and name (a new list: the gradient pass appends to it)."""
        out = []
        for nid, gnode in enumerate(self.nodes):
            for k in range(self.entry_ptr[nid], self.entry_ptr[nid + 1]):
                a = self.arrays[k]
                out.append(EntryInfo(tuple(a.shape), a.dtype, f"{gnode.name}_output{k - self.entry_ptr[nid]}",
                                     gnode.is_variable))
        return out

    def split_inputs(self, nid: int) -> tuple[list[int], list[int]]:
        return self._inputs[nid]
