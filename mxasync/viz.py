"""``mx.viz``: a layer table (``print_summary``) and a graphviz drawing (``plot_network``) of a symbol.

>>> import mxasync as mx
>>> from mxasync import symbol as sym
>>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
>>> print_summary(net, {"data": (2, 3)}, line_length=80)
________________________________________________________________________________
Layer (type)                       Output Shape    Param # Previous Layer
================================================================================
data(null)                         3               0
________________________________________________________________________________
fc(FullyConnected)                 4               16      data
================================================================================
Total params: 16
________________________________________________________________________________
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from .base import MXAsyncError
from .symbol._indexed import IndexedGraph
from .symbol._infer import infer_graph

__all__ = ["print_summary", "plot_network"]

# variables drawn only when hide_weights=False (MXNet's suffix rule)
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean", "_running_var",
                    "_running_mean", "_label")


def _shapes(g: IndexedGraph, shape: dict | None) -> list | None:
    if not shape:
        return None
    by_name = {g.nodes[i].name: i for i in g.input_nodes}
    unknown = set(shape) - set(by_name)
    if unknown:
        raise MXAsyncError(f"viz: {sorted(unknown)} are not inputs of the symbol")
    return infer_graph(g, {by_name[k]: tuple(v) for k, v in shape.items()}, "shape")


def _fmt_shape(s) -> str:
    return "x".join(str(d) for d in s[1:]) if s else "?"


def print_summary(symbol, shape: dict | None = None, line_length: int = 120,
                  positions: tuple = (0.44, 0.64, 0.74, 1.0)) -> None:
    """Print each layer with its output shape (batch axis dropped), parameter count and inputs.

    Parameters are the variables an op reads that ``shape`` does not name (weights, biases, aux
    states), labels (``*_label``) excepted.
    """
    g = IndexedGraph(symbol)
    shapes = _shapes(g, shape)
    given = set(shape or {})
    cols = [int(line_length * p) for p in positions]

    def row(fields: list[str]) -> None:
        line, start = "", 0
        for f, end in zip(fields, cols, strict=True):
            line += str(f)[:end - start - 1].ljust(end - start)  # one space always separates columns
            start = end
        print(line.rstrip())

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    rows = [i for i, n in enumerate(g.nodes) if not n.is_variable or n.name in given]
    for k, nid in enumerate(rows):
        node = g.nodes[nid]
        params, prev = 0, []
        for e in g.inputs[nid]:
            src = g.nodes[_node_of(g, e)]
            if src.is_variable and src.name not in given:
                if shapes is not None and src.name.endswith("_label"):
                    continue  # labels are inputs, not parameters
                if shapes is not None and shapes[e] is not None:
                    params += int(np.prod(shapes[e], dtype=np.int64))
            else:
                prev.append(src.name)
        total += params
        out = _fmt_shape(shapes[g.entry_ptr[nid]]) if shapes is not None else ""
        kind = "null" if node.is_variable else node.op.name
        row([f"{node.name}({kind})", out, params, prev[0] if prev else ""])
        for p in prev[1:]:
            row(["", "", "", p])
        print(("=" if k == len(rows) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


def _node_of(g: IndexedGraph, eid: int) -> int:
    lo, hi = 0, len(g.nodes) - 1
    while lo < hi:  # entry_ptr is sorted: binary search for the owner
        mid = (lo + hi + 1) // 2
        if g.entry_ptr[mid] <= eid:
            lo = mid
        else:
            hi = mid - 1
    return lo


_DIMS = re.compile(r"\s*[\(\[]?\s*(-?\d+\s*(,\s*-?\d+\s*)*,?)?\s*[\)\]]?\s*")


def _dims(value) -> str:
    """``"(3, 3)"`` (a symbol file's string) or ``(3, 3)`` -> ``"3x3"``, parsed without ``eval``;
    anything else is shown as it is.

    >>> _dims("(3, 3)"), _dims((2, 2)), _dims("[5]"), _dims("__import__('os')")
    ('3x3', '2x2', '5', "__import__('os')")
    """
    if isinstance(value, (tuple, list)):
        return "x".join(str(v) for v in value)
    text = str(value)
    if len(text) > 200 or not _DIMS.fullmatch(text):
        return text
    return "x".join(re.findall(r"-?\d+", text))


def _label(node) -> tuple[str, str]:
    """Text and fill colour of an op box."""
    p = node.attrs
    op = node.op.name
    if op in ("Convolution", "Deconvolution"):
        kernel = _dims(p.get("kernel", "()"))
        stride = _dims(p.get("stride", "(1, 1)"))
        return f"{op}\n{kernel}/{stride}, {p.get('num_filter', '')}", "#fb8072"
    if op == "FullyConnected":
        return f"FullyConnected\n{p.get('num_hidden', '')}", "#fb8072"
    if op in ("Activation", "LeakyReLU"):
        return f"{op}\n{p.get('act_type', '')}", "#ffffb3"
    if op == "Pooling":
        kernel = _dims(p.get("kernel", "()"))
        return f"Pooling\n{p.get('pool_type', 'max')}, {kernel}", "#80b1d3"
    if op in ("BatchNorm", "Dropout", "LRN"):
        return op, "#bebada"
    if op in ("Concat", "Flatten", "Reshape", "SliceChannel"):
        return op, "#fdb462"
    if op.endswith("Output") or op == "MakeLoss":
        return op, "#b3de69"
    return f"{op}\n{node.name}", "#fccde5"


def _warn_repeated_names(g) -> None:
    """Nodes sharing a name collapse into one graphviz node (a cycle in the drawing): say so, as MXNet does."""
    seen: set[str] = set()
    repeated: list[str] = []
    for node in g.nodes:
        if node.name in seen and node.name not in repeated:
            repeated.append(node.name)
        seen.add(node.name)
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this may result in cyclic "
                      "graph. Repeated names: " + ",".join(repeated), stacklevel=3)


def plot_network(symbol, title: str = "plot", save_format: str = "pdf", shape: dict | None = None,
                 dtype: Any = None, node_attrs: dict | None = None, hide_weights: bool = True):
    """A ``graphviz.Digraph`` of the network; edges carry output shapes when ``shape`` is given.

    Needs the ``graphviz`` Python package (rendering also needs the system's graphviz).
    """
    try:
        import graphviz
    except ImportError:
        raise MXAsyncError("plot_network needs the graphviz Python package: pip install graphviz "
                           "(and the graphviz system package to render)") from None
    g = IndexedGraph(symbol)
    _warn_repeated_names(g)
    shapes = _shapes(g, shape)
    attrs = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
    attrs.update(node_attrs or {})
    dot = graphviz.Digraph(name=title, format=save_format)
    hidden = set()
    for nid, node in enumerate(g.nodes):
        if node.is_variable:
            if hide_weights and node.name.endswith(_WEIGHT_SUFFIXES):
                hidden.add(nid)
                continue
            dot.node(name=node.name, label=node.name, **{**attrs, "shape": "oval", "fillcolor": "#8dd3c7"})
            continue
        label, color = _label(node)
        dot.node(name=node.name, label=label, **{**attrs, "fillcolor": color})
        for e in g.inputs[nid]:
            src = _node_of(g, e)
            if src in hidden:
                continue
            edge = {"dir": "back", "arrowtail": "open"}
            if shapes is not None and shapes[e] is not None:
                edge["label"] = _fmt_shape(shapes[e])
            dot.edge(tail_name=node.name, head_name=g.nodes[src].name, **edge)
    return dot
