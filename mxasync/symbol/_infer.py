"""Shape and type inference over a whole graph: forward and backward sweeps until nothing changes.

Ops infer outputs from inputs (``OperatorProperty.infer_shape``); going
backwards, an elementwise op (same shape in and out, found by probing its own
rule) passes a known output shape to its unknown inputs.

>>> from mxasync import symbol as sym
>>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=4, name="fc")
>>> net.infer_shape(data=(2, 5))
([(2, 5), (4, 5), (4,)], [(2, 4)], [])
>>> net.infer_shape()
(None, None, None)
>>> net.infer_shape_partial(fc_weight=(4, 5))
([(), (4, 5), ()], [()], [])
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..base import MXAsyncError
from ..util import is_np_shape
from ._indexed import IndexedGraph

__all__ = ["infer_shape", "infer_type", "infer_graph", "var_hints"]

_ELEMWISE: dict = {}
_PROBES = ((3, 4, 5, 6), (7,))


def _elementwise(prop, kind: str) -> bool:
    """Whether every input and output of ``prop`` has one shape (or dtype), decided by probing its rule."""
    key = (prop, kind)
    hit = _ELEMWISE.get(key)
    if hit is None:
        hit = _ELEMWISE[key] = _probe(prop, kind)
    return hit


def _probe(prop, kind: str) -> bool:
    n = len(prop.list_arguments())
    if n == 0:
        return False
    rule = prop.infer_shape if kind == "shape" else prop.infer_type
    # float16 and float32 too: amp_cast passes other types through but changes these
    probes = _PROBES if kind == "shape" else tuple(map(np.dtype, ("float64", "int32", "float16", "float32")))
    try:
        for p in probes:
            for i in range(n):  # any single known input must determine every output
                ins = [None] * n
                ins[i] = p
                _, outs, _ = rule(ins)
                if not outs or any(o is None or _norm(o, kind) != _norm(p, kind) for o in outs):
                    return False
    except Exception:  # noqa: BLE001 - an op that refuses the probe is not elementwise
        return False
    return True


def _norm(v, kind: str):
    if v is None:
        return None
    return tuple(int(x) for x in v) if kind == "shape" else np.dtype(v)


_SHAPE_TEXT = re.compile(r"^\s*[(\[]\s*((?:-?\d+L?\s*,\s*)*(?:-?\d+L?)?)\s*,?\s*[)\]]\s*$")


def parse_shape_attr(text: str, var: str) -> tuple[int, ...]:
    """A variable's ``__shape__`` text, ``"(2, 3)"`` (MXNet's ``str(tuple)``), as a tuple of ints."""
    m = _SHAPE_TEXT.match(text) if isinstance(text, str) else None
    if m is None:
        raise MXAsyncError(f"variable {var!r}: its __shape__ attribute {text!r} is not a shape; "
                           "expected a tuple of integers such as '(2, 3)'")
    return tuple(int(d.strip().rstrip("L")) for d in m.group(1).split(",") if d.strip())


def var_hints(g: IndexedGraph, kind: str) -> dict[int, Any]:
    """Shapes (``__shape__``) or dtypes (``__dtype__``) that variables declare."""
    from ..ndarray._serialization import TYPE_FLAGS

    out = {}
    for i in g.input_nodes:
        attrs = g.nodes[i].attrs
        if kind == "shape" and "__shape__" in attrs:
            s = parse_shape_attr(attrs["__shape__"], g.nodes[i].name)
            if is_np_shape():
                # NumPy shapes: () is a scalar; a declared 0 (Gluon's deferred parameters) stays unknown
                out[i] = tuple(-1 if d == 0 else d for d in s)
            elif s and any(d > 0 for d in s):  # 0 marks an unknown dimension: a partial hint
                out[i] = s
        elif kind == "type" and "__dtype__" in attrs:
            out[i] = TYPE_FLAGS[int(attrs["__dtype__"])]
    return out


def infer_graph(g: IndexedGraph, known: dict[int, Any], kind: str, hints: bool = True) -> list:
    """Per entry id the inferred shape (tuple) or dtype (``np.dtype``), None when unknown.

    ``known`` maps variable node ids to their given values; ``hints``: the variables' own
    ``__shape__`` / ``__dtype__`` attributes count too (MXNet's passes that re-infer a rewritten
    graph, AMP's among them, leave them out).
    """
    vals: list = [None] * g.num_entries
    for nid, v in {**(var_hints(g, kind) if hints else {}), **known}.items():
        vals[g.entry_ptr[nid]] = _norm(v, kind)
    ops = [i for i, n in enumerate(g.nodes) if not n.is_variable]
    done = bytearray(len(g.nodes))  # ran with every entry known: running again can change nothing
    for _ in range(len(ops) + 2):
        changed = False
        for nid in ops:
            if not done[nid]:
                changed |= _step(g, nid, vals, kind, done)
        for nid in reversed(ops):
            if not done[nid]:
                changed |= _step(g, nid, vals, kind, done)
        if not changed:
            break
    return vals


def _unknown_dim() -> int:
    """The dimension that means "not known yet": 0 in MXNet's classic semantics, -1 in NumPy-shape
    mode (``npx.set_np()``), where 0 is a zero-size axis."""
    return -1 if is_np_shape() else 0


def _partly_known(shape) -> bool:
    """MXNet's shape semantics: a 0 dimension is not known yet (``Variable(shape=(0, 16))``, ``zeros((0, 16))``)."""
    return shape is not None and _unknown_dim() in shape


def _settled(v, kind: str) -> bool:
    return v is not None and not (kind == "shape" and _unknown_dim() in v)


def _merge_shapes(old: tuple, new: tuple) -> tuple | None:
    """The two shapes with each unknown (0) dimension filled from the other; None when they disagree."""
    if len(old) != len(new):
        return None
    merged = []
    unk = _unknown_dim()
    for a, b in zip(old, new, strict=True):
        if a != b and a != unk and b != unk:
            return None
        merged.append(b if a == unk else a)
    return tuple(merged)


def _refine_partial(g, prop, args, outs, vals, put) -> None:
    """Fill unknown (0) input dimensions: an elementwise op gives every input and output the merge of the
    shapes it has; other ops may say how their outputs determine their inputs (``refine_partial_inputs``,
    e.g. FullyConnected takes the batch size from its output, as MXNet's shape functions do)."""
    if _elementwise(prop, "shape"):
        merged = None
        for e in list(args) + list(outs):
            v = vals[e]
            if v is not None:
                merged = v if merged is None else _merge_shapes(merged, v)
                if merged is None:
                    return  # a real mismatch: the op's own rule reports it
        for e in args:
            put(e, merged, "input")
        for e in outs:
            put(e, merged, "output")
        return
    if all(vals[e] is not None for e in outs):
        refined = prop.refine_partial_inputs([vals[e] for e in args], [vals[e] for e in outs])
        for e, v in zip(args, refined or (), strict=False):
            put(e, v, "input")


def _fmt(v) -> str:
    return "?" if v is None else (str(tuple(v)) if isinstance(v, tuple) else np.dtype(v).name)


def _step(g: IndexedGraph, nid: int, vals: list, kind: str, done: bytearray) -> bool:
    node = g.nodes[nid]
    prop = node.prop
    args, aux = g.split_inputs(nid)
    outs = range(g.entry_ptr[nid], g.entry_ptr[nid + 1])
    changed = False
    complete = all(_settled(vals[e], kind) for e in args) and all(_settled(vals[e], kind) for e in outs) and all(
        _settled(vals[e], kind) for e in aux)

    def put(eid: int, v, what: str) -> None:
        nonlocal changed
        if v is None:
            return
        v = _norm(v, kind)
        old = vals[eid]
        if old is None:
            vals[eid] = v
            changed = True
        elif old != v and kind == "shape" and (merged := _merge_shapes(old, v)) is not None:
            if merged != old:  # a 0 (unknown) dimension became known
                vals[eid] = merged
                changed = True
        elif old != v:
            raise MXAsyncError(
                f"infer_{kind}: error in operator {node.name} ({node.op.name}): {what} "
                f"{g.entry_name(eid)!r} is {_fmt(old)} but the op infers {_fmt(v)}; inputs: "
                + ", ".join(f"{a}={_fmt(vals[e])}" for a, e in zip(prop.list_arguments(), args, strict=False)))

    first_out = vals[outs[0]] if outs else None
    if first_out is not None and any(vals[e] is None for e in args) and _elementwise(prop, kind):
        for e in args:
            put(e, first_out, "input")
    if kind == "shape" and any(vals[e] is None or _partly_known(vals[e]) for e in args):
        _refine_partial(g, prop, args, outs, vals, put)
    rule = prop.infer_shape if kind == "shape" else prop.infer_type
    ins = [vals[e] for e in args]
    try:
        try:
            # MXNet's ops take shapes with unknown (0) dimensions and give partial shapes back
            # (FullyConnected of (0, 10) is (0, 21)); an op whose rule refuses them sees them as unknown
            in_v, out_v, aux_v = rule(list(ins))
        except MXAsyncError:
            if kind != "shape" or not any(_partly_known(v) for v in ins):
                raise
            ins = [None if _partly_known(v) else v for v in ins]
            in_v, out_v, aux_v = rule(list(ins))
    except (MXAsyncError, IndexError, ValueError, TypeError) as exc:  # a rule's own slip is reported the same way
        raise MXAsyncError(f"infer_{kind}: error in operator {node.name} ({node.op.name}): {exc}; inputs: "
                           + ", ".join(f"{a}={_fmt(v)}" for a, v in zip(prop.list_arguments(), ins, strict=False))
                           ) from None
    for e, v in zip(args, in_v, strict=False):
        put(e, v, "input")
    for e, v in zip(outs, out_v, strict=False):
        put(e, v, "output")
    for e, v in zip(aux, aux_v, strict=False):
        put(e, v, "auxiliary state")
    if complete:
        done[nid] = 1
    return changed


def _known(g: IndexedGraph, sym, args: tuple, kwargs: dict, kind: str) -> dict[int, Any]:
    arg_names = [g.nodes[i].name for i in g.arg_nodes]
    by_name = {g.nodes[i].name: i for i in g.input_nodes}
    known: dict[int, Any] = {}
    if args:
        if len(args) > len(arg_names):
            raise MXAsyncError(f"infer_{kind}: {len(args)} values for {len(arg_names)} arguments")
        for name, v in zip(arg_names, args, strict=False):
            if v is not None:
                known[by_name[name]] = v
    for name, v in kwargs.items():
        if name not in by_name:
            raise MXAsyncError(f"infer_{kind}: {name!r} is not an input of the symbol; inputs are {list(by_name)}")
        if v is not None:
            known[by_name[name]] = v
    return known


def _result(g: IndexedGraph, vals: list, kind: str, partial: bool):
    # an unknown shape: () outside NumPy-shape mode (MXNet's ndim 0), None in it (where () is a scalar)
    unknown = None if kind == "type" or is_np_shape() else ()

    def conv(v):
        if v is None:
            return unknown
        return v if kind == "shape" else v.type

    arg = [vals[g.entry_ptr[i]] for i in g.arg_nodes]
    out = [vals[e] for e in g.heads]
    aux = [vals[g.entry_ptr[i]] for i in g.aux_nodes]
    if not partial and any(v is None or (kind == "shape" and _partly_known(v)) for v in arg + out + aux):
        return None, None, None
    return [conv(v) for v in arg], [conv(v) for v in out], [conv(v) for v in aux]


def infer_shape(sym, args: tuple, kwargs: dict, partial: bool, graph: IndexedGraph | None = None):
    g = graph or IndexedGraph(sym)
    known = {k: tuple(v) for k, v in _known(g, sym, args, kwargs, "shape").items()}
    vals = g.inferred["shape"] = infer_graph(g, known, "shape")
    return _result(g, vals, "shape", partial)


def infer_type(sym, args: tuple, kwargs: dict, partial: bool, graph: IndexedGraph | None = None):
    g = graph or IndexedGraph(sym)
    known = {k: np.dtype(v) for k, v in _known(g, sym, args, kwargs, "type").items()}
    vals = g.inferred["type"] = infer_graph(g, known, "type")
    return _result(g, vals, "type", partial)


def infer_again(g: IndexedGraph, known: dict[int, Any], kind: str) -> list:
    """``infer_graph``, reusing the graph's last complete result when ``known`` agrees with it.

    Inference is deterministic, so values that every op's rule already confirmed
    stay right when the inputs they were inferred from are given as they are
    (``simple_bind`` infers, then binds arrays of exactly those shapes).
    """
    vals = g.inferred.get(kind)
    if vals is not None and None not in vals and all(
            vals[g.entry_ptr[n]] == _norm(v, kind) for n, v in known.items()):
        return vals
    return infer_graph(g, known, kind)
