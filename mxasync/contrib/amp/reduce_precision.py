"""``convert_symbol``'s graph rewrite: MXNet 1.9.1's ReducePrecision pass (low_precision_pass.cc),
then the ``__dtype__`` attributes its C API sets on the inputs (MXReducePrecisionSymbol).

Nodes are visited in topological order and copied; the types known so far are tracked per entry
(``fp32`` and ``target`` maps from an original entry to the entry that carries it in that type):

* float32 ops and excluded nodes: inputs not known in float32 get ``amp_cast`` to float32
  (variables are taken to be float32 already);
* target-precision ops: the op's type rule, given the target type for input 0, says which inputs
  take the target type; those not known in it get ``amp_cast`` to it, except mutable inputs and
  (``cast_optional_params``) parameters, which are then stored in the target type instead;
* widest-type ops: if every input's type is known, ``amp_cast`` to the widest; else one
  ``amp_multicast`` over all inputs;
* conditional float32 ops whose param matches: as float32 ops (mutable inputs left alone);
* any other op: its outputs' types follow from its type rule when input 0's type is known.

The graph's outputs are cast to float32 unless known in float32.  Cast nodes are named as MXNet
names them (``<node>_<output>_amp_cast_<dtype>``, ``<node>_<output>_amp_multicast``), and an entry
cast once is shared by every consumer.
"""

from __future__ import annotations

import numpy as np

from ...base import MXAsyncError
from ...ndarray._dtype_maps import _DTYPE_NP_TO_MX
from ...operator.registry import get_op
from ...symbol._indexed import IndexedGraph
from ...symbol._infer import infer_graph
from ...symbol._node import Node, op_params, topo_order
from ...symbol.symbol import Symbol
from .lists import OpLists

__all__ = ["reduce_precision", "set_input_dtypes"]

_F32 = np.dtype(np.float32)


def _key(entry) -> tuple:
    return id(entry[0]), entry[1], entry[2]


def _infer(node: Node, in0) -> tuple[list, list] | None:
    """The op's type rule given ``in0`` for input 0 (others unknown): (input types incl. aux, output
    types), or None when the rule refuses."""
    prop = node.prop
    n_args = len(prop.list_arguments())
    given = [in0] + [None] * (n_args - 1)
    try:
        ins, outs, aux = prop.infer_type(given)
    except (MXAsyncError, ValueError, TypeError, IndexError):
        return None
    norm = [None if t is None else np.dtype(t) for t in list(ins) + list(aux)]
    return norm + [None] * (len(node.inputs) - len(norm)), [None if t is None else np.dtype(t) for t in outs]


class _Rewrite:
    def __init__(self, lists: OpLists, excluded: set, data_names: set, cast_optional_params: bool):
        self.lists, self.excluded, self.data_names = lists, excluded, data_names
        self.optional = cast_optional_params
        self.target = lists.target_dtype
        self.target_name = "bfloat16" if self.target.name == "bfloat16" else self.target.name
        self.mirror: dict[int, Node] = {}
        self.fp32: dict[tuple, tuple] = {}
        self.low: dict[tuple, tuple] = {}
        self._amp_cast, self._multicast = get_op("amp_cast"), get_op("amp_multicast")

    def mirrored(self, entry) -> tuple:
        return self.mirror[id(entry[0])], entry[1], entry[2]

    def suffix(self, entry) -> str:
        node = entry[0]
        return "" if node.is_variable else "_" + node.prop.list_outputs()[entry[1]]

    def cast(self, entry, dtype_name: str, into: dict) -> tuple:
        node = Node(self._amp_cast, f"{entry[0].name}{self.suffix(entry)}_amp_cast_{dtype_name}",
                    {"dtype": dtype_name}, [self.mirrored(entry)])
        into[_key(entry)] = (node, 0, entry[2])
        return into[_key(entry)]

    def record_outputs(self, node: Node, new: Node, out_types: list) -> None:
        for i, t in enumerate(out_types):
            if t == self.target:
                self.low[(id(node), i, 0)] = (new, i, 0)
            elif t == _F32:
                self.fp32[(id(node), i, 0)] = (new, i, 0)

    def visit(self, node: Node) -> Node:
        new = node.copy()
        new.inputs = []
        self.mirror[id(node)] = new
        if node.is_variable:
            return new
        op, lists = node.op.name, self.lists
        excluded = node.name in self.excluded
        if op in lists.fp32 or excluded:
            self.fp32_node(node, new, set())
        elif op in lists.target:
            self.target_node(node, new)
        elif op in lists.widest:
            self.widest_node(node, new)
        elif lists.is_conditional_fp32(op, op_params(node.attrs)):
            self.fp32_node(node, new, set(node.mutable_positions()))
        else:
            self.other_node(node, new)
        return new

    def fp32_node(self, node: Node, new: Node, leave: set) -> None:
        for i in range(node.num_outputs()):
            self.fp32[(id(node), i, 0)] = (new, i, 0)
        for i, e in enumerate(node.inputs):
            if _key(e) in self.fp32:
                new.inputs.append(self.fp32[_key(e)])
            elif e[0].is_variable or i in leave:  # variables are taken to be float32
                new.inputs.append(self.mirrored(e))
            else:
                new.inputs.append(self.cast(e, "float32", self.fp32))

    def target_node(self, node: Node, new: Node) -> None:
        inferred = _infer(node, self.target)
        if inferred is None:
            raise MXAsyncError(f"amp.convert_symbol: {node.op.name}({node.name}) cannot run in {self.target_name}")
        in_types, out_types = inferred
        self.record_outputs(node, new, out_types)
        mutable = set(node.mutable_positions())
        for i, e in enumerate(node.inputs):
            param = self.optional and e[0].is_variable
            if _key(e) in self.low:
                new.inputs.append(self.low[_key(e)])
            elif (param and e[0].name not in self.data_names) or i in mutable or \
                    not (in_types[i] is None or in_types[i] == self.target):
                new.inputs.append(self.mirrored(e))
                if param:  # a parameter stored in the target type (MXNet marks data inputs so too)
                    self.low[_key(e)] = self.mirrored(e)
            else:
                new.inputs.append(self.cast(e, self.target_name, self.low))

    def widest_node(self, node: Node, new: Node) -> None:
        if not node.inputs:
            raise MXAsyncError(f"amp.convert_symbol: {node.op.name}({node.name}) has no inputs")
        known = [k in self.low or k in self.fp32 for k in map(_key, node.inputs)]
        if not all(known):
            first = node.inputs[0]
            cast = Node(self._multicast, f"{first[0].name}{self.suffix(first)}_amp_multicast",
                        {"num_outputs": str(len(node.inputs))}, [self.mirrored(e) for e in node.inputs])
            new.inputs = [(cast, i, e[2]) for i, e in enumerate(node.inputs)]
            return
        wide = any(_key(e) in self.fp32 for e in node.inputs)
        into, name = (self.fp32, "float32") if wide else (self.low, self.target_name)
        for i in range(node.num_outputs()):
            into[(id(node), i, 0)] = (new, i, 0)
        for e in node.inputs:
            new.inputs.append(into[_key(e)] if _key(e) in into else self.cast(e, name, into))

    def other_node(self, node: Node, new: Node) -> None:
        if node.inputs:
            first = _key(node.inputs[0])
            if first in self.low or first in self.fp32:
                inferred = _infer(node, self.target if first in self.low else _F32)
                if inferred is not None:
                    self.record_outputs(node, new, inferred[1])
        new.inputs = [self.mirrored(e) for e in node.inputs]

    def outputs(self, heads: list) -> list:
        out = []
        for e in heads:
            if _key(e) in self.fp32:
                out.append(self.fp32[_key(e)])
            else:
                out.append(self.cast(e, "float32", self.fp32))
        return out


def reduce_precision(sym: Symbol, lists: OpLists, excluded: set, data_names: set,
                     cast_optional_params: bool) -> Symbol:
    """``sym`` with MXNet's casts inserted (a new graph; ``sym`` is left as it was)."""
    rewrite = _Rewrite(lists, excluded, data_names, cast_optional_params)
    for node in topo_order(sym._heads):
        rewrite.visit(node)
    return Symbol(rewrite.outputs(sym._heads))


def _infer_unknown(g: IndexedGraph, types: list, target: np.dtype) -> list:
    """MXNet's AMPInferUnknown (``cast_optional_params``): a variable whose type inference left unknown
    takes the type the ``amp_cast`` it feeds casts to, or the target type when it feeds an
    ``amp_multicast`` whose inputs are all variables; a variable claimed two ways keeps its inferred type."""
    result = list(types)
    claimed: dict[str, np.dtype] = {}

    def claim(eid: int, name: str, dtype: np.dtype) -> None:
        if name not in claimed:
            if result[eid] is None:
                claimed[name] = dtype
                result[eid] = dtype
        elif claimed[name] != dtype:
            result[eid] = types[eid]

    for node in g.nodes:
        if node.is_variable or node.op.name not in ("amp_cast", "amp_multicast"):
            continue
        inputs = [(g.eid(e), e[0]) for e in node.inputs]
        if node.op.name == "amp_cast":
            dtype = np.dtype(node.prop.params.dtype)
            for eid, child in inputs:
                if child.is_variable:
                    claim(eid, child.name, dtype)
        elif all(child.is_variable for _, child in inputs):
            for eid, child in inputs:
                claim(eid, child.name, target)
    return result


def set_input_dtypes(sym: Symbol, data_names: list, model_params: set, target: np.dtype,
                     cast_optional_params: bool) -> None:
    """Write ``__dtype__`` (MXNet's type code) on ``sym``'s inputs as MXReducePrecisionSymbol does: on
    every model parameter when there are any, else only on inputs that declared one; the type is
    what inference gives with the data inputs in float32 (unknown: float32)."""
    g = IndexedGraph(sym)
    by_name = {g.nodes[i].name: i for i in g.input_nodes}
    known = {by_name[n]: _F32 for n in data_names if n in by_name}
    types = infer_graph(g, known, "type", hints=False)
    if cast_optional_params:
        types = _infer_unknown(g, types, target)
    for nid in g.input_nodes:
        node = g.nodes[nid]
        if model_params and node.name not in model_params:
            continue
        if not model_params and "__dtype__" not in node.attrs:
            continue
        t = types[g.entry_ptr[nid]]
        node.attrs["__dtype__"] = str(_DTYPE_NP_TO_MX[(t if t is not None else _F32).type])
