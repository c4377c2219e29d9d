"""Common subexpression elimination: the graph pass MXNet 1.9 runs when binding
(``MXNET_ELIMINATE_COMMON_EXPR``, on unless set to ``0``).

Two op nodes that apply the same op with the same attributes to the same input entries
compute the same thing: the later one (in topological order) is dropped and its users
read the first.  Ops that draw random numbers or use any resource other than temporary
space, ops that write their inputs (aux states, in-place updates) and nodes without
inputs (``zeros``, ``ones``) are never merged.
When merging leaves one entry as several outputs of the graph, each repeat goes through
a ``_copy`` node named ``<node>_<index>_copy`` so that every output has its own array,
as in MXNet.

>>> import mxasync as mx
>>> a, b = mx.sym.var("a"), mx.sym.var("b")
>>> s1, s2 = mx.sym.elemwise_add(a, b, name="s1"), mx.sym.elemwise_add(a, b, name="s2")
>>> eliminate_common_expr(mx.sym.elemwise_mul(s1, s2, name="m")).get_internals().list_outputs()
['a', 'b', 's1_output', 'm_output']
>>> eliminate_common_expr(mx.sym.Group([s1, s2])).list_outputs()
['s1_output', 's1_0_copy_output']
"""

from __future__ import annotations

import os

from ..operator.registry import get_op
from ..runtime.resource import ResourceRequest
from ._node import Node, topo_order

__all__ = ["eliminate_common_expr", "cse_enabled"]


def cse_enabled() -> bool:
    """MXNet's ``MXNET_ELIMINATE_COMMON_EXPR``, read at each bind (default on)."""
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip() not in ("0", "false", "False")


def _mergeable(node: Node) -> bool:
    # nodes without inputs (zeros, ones, samplers: shapes possibly inferred from their users) stay
    if node.is_variable or not node.inputs or node.mutable_positions():
        return False
    prop = node.prop
    requests = list(prop.forward_resource()) + list(prop.backward_resource())
    return all(r == ResourceRequest.TEMP_SPACE for r in requests)


def eliminate_common_expr(sym):
    """``sym`` with common subexpressions merged; ``sym`` itself when nothing merges."""
    from .symbol import Symbol

    order = topo_order(sym._heads)
    replaced: dict[int, Node] = {}   # id(original node) -> its node in the new graph
    seen: dict[tuple, Node] = {}     # signature -> surviving node
    changed = False
    for node in order:
        if node.is_variable:
            replaced[id(node)] = node
            continue
        inputs = [(replaced[id(e[0])], e[1], e[2]) for e in node.inputs]
        key = None
        if _mergeable(node):
            key = (node.op.name, tuple(sorted(node.attrs.items())),
                   tuple((id(n), k, v) for n, k, v in inputs))
            twin = seen.get(key)
            if twin is not None:
                replaced[id(node)] = twin
                changed = True
                continue
        if any(new[0] is not old[0] for new, old in zip(inputs, node.inputs, strict=True)):
            copy = node.copy()
            copy.inputs = inputs
        else:
            copy = node
        replaced[id(node)] = copy
        if key is not None:
            seen[key] = copy
    if not changed:
        return sym
    heads, owner, chosen = [], set(), {}
    for node, k, v in sym._heads:
        orig = (id(node), k)
        if orig in chosen:  # repeated in the bound symbol itself: stays one entry, as in MXNet
            heads.append(chosen[orig])
            continue
        head = (replaced[id(node)], k, v)
        if (id(head[0]), k) in owner:  # merging made it another output's entry: give it its own array
            head = (Node(get_op("_copy"), f"{head[0].name}_{k}_copy", {}, [head]), 0, 0)
        owner.add((id(head[0]), head[1]))
        chosen[orig] = head
        heads.append(head)
    return Symbol(heads)
