"""``mx.autograd.get_symbol``: the recorded computation of an array as a Symbol.

>>> import mxasync as mx
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.sin(x) * 2
>>> mx.autograd.get_symbol(y).list_arguments()
['var0']
"""

from __future__ import annotations

from ..autograd.function import _FunctionProp
from ..base import MXAsyncError
from ..ndarray.ndarray import NDArray
from .register import create
from .symbol import Variable

__all__ = ["get_symbol"]


def get_symbol(x: NDArray):
    """The recorded computation of ``x`` as a Symbol; its variables are the graph's leaves
    (``var0``, ``var1``, ... in order of first use)."""
    if x._ag is None:
        raise MXAsyncError("get_symbol: the array is not in a computational graph (record it under "
                           "autograd.record() from inputs with attach_grad())")
    leaves: dict[int, object] = {}
    built: dict[int, object] = {}

    def leaf(key: int):
        if key not in leaves:
            leaves[key] = Variable(f"var{len(leaves)}")
        return leaves[key]

    def symbol_of(arr: NDArray, e):
        if e is None or e.node is None:
            return leaf(id(e) if e is not None else id(arr))
        node = e.node
        sym = built.get(id(node))
        if sym is None:
            if node.freed:
                raise MXAsyncError("get_symbol: the graph was freed by backward (pass retain_graph=True)")
            if isinstance(node.prop, _FunctionProp):
                raise MXAsyncError(f"get_symbol: {node.prop.label} has no symbolic form")
            ins = [symbol_of(a, ie) for a, ie in zip(node.inputs, node.in_ag, strict=True)]
            ins += [leaf(id(a)) for a in node.aux]
            subgraph = getattr(node.prop, "symbol", None)
            if subgraph is not None:  # a hybridized block's call: its graph, fed by the recorded inputs
                sym = subgraph(**dict(zip(node.prop.input_names, ins, strict=True)))
            else:
                sym = create(node.prop.op_name, ins, node.prop.params.to_strings(only_set=True))
            built[id(node)] = sym
        return sym[e.index] if len(sym.list_outputs()) > 1 else sym

    return symbol_of(x, x._ag)
