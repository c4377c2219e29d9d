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
    """The graph of ``nodes`` (recorded nodes reachable from ``heads``, oldest first)."""

    def __init__(self, nodes: list, heads: list):
        self.nodes: list[_GraphNode] = []
        self.entry_ptr = [0]
        self.arrays: list = []  # per entry: its array
        self.entries: list[EntryInfo] = []  # per entry: shape, dtype, name (what build_backward extends)
        self.variables: dict = {}  # node id -> the autograd Entry of a variable (an attach_grad'ed array)
        self._inputs: list[tuple[list[int], list[int]]] = []
        self._var_of: dict[int, int] = {}  # id(autograd entry or constant array) -> node id
        self._out_of: dict[int, int] = {}  # id(recorded node) -> node id
        shape = []  # what the gradient pass reads of the graph: its structure, for reusing its result
        for node in nodes:
            args = [self._entry(x, e) for x, e in zip(node.inputs, node.in_ag, strict=True)]
            aux = [self._entry(a, None) for a in node.aux]
            gnode = _GraphNode(node, f"{node.prop.op_name}{node.seq}", len(node.outputs))
            nid = self._add(gnode, node.outputs, (args, aux))
            self._out_of[id(node)] = nid
            shape.append((nid, gnode.prop, tuple(args), len(node.outputs)))
        self.heads = [self._entry(h, h._ag) for h in heads]
        self.num_entries = self.entry_ptr[-1]
        #: equal for two tapes whose gradient pass gives the same ops (a training loop's iterations):
        #: the op nodes' props and wiring, the variables' node ids, the heads
        self.structure = (tuple(shape), tuple(self.variables), tuple(self.heads), self.num_entries)

    def _add(self, gnode: _GraphNode, arrays: list, inputs) -> int:
        nid = len(self.nodes)
        self.nodes.append(gnode)
        self._inputs.append(inputs)
        for k, a in enumerate(arrays):
            self.arrays.append(a)
            self.entries.append(EntryInfo(tuple(a.shape), a.dtype, f"{gnode.name}_output{k}", gnode.is_variable))
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
            nid = self._var_of[key] = self._add(_GraphNode(None, f"var{len(self._var_of)}"), [arr], ([], []))
            if ag is not None:
                self.variables[nid] = ag
        return self.entry_ptr[nid]

    def split_inputs(self, nid: int) -> tuple[list[int], list[int]]:
        return self._inputs[nid]
