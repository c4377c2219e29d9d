"""MXNet's symbol JSON (``sym.tojson()`` / ``mx.sym.load_json`` / ``*-symbol.json``) as plain data.

:func:`load_graph` reads what MXNet 1.x writes, upgrading older files the way MXNet 1.9.1
does: node attributes under ``"param"`` / ``"attr"`` (pre-NNVM), ``[node, index]`` entries
without a version, and, for files older than 1.9.1 (no ``mxnet_version`` means v0.8), the
hidden keys ``ctx_group``, ``lr_mult``, ``wd_mult``, ``force_mirroring`` and ``mirror_stage``
renamed to ``__ctx_group__`` and so on. :func:`dump_graph` writes the text MXNet 1.9.1's
``tojson()`` would write for the same graph, byte for byte (its indentation, ``", "``
separators, sorted attributes, arrays of more than 10 items one per line).

Ops are not interpreted here: attribute values stay strings, and a node's output count is
known only through ``node_row_ptr`` (or a ``num_outputs`` callback when dumping).

>>> g = load_graph('{"nodes": [{"op": "null", "name": "x", "inputs": []}], '
...                '"arg_nodes": [0], "heads": [[0, 0]]}')
>>> g.nodes[0].name, g.heads, g.mxnet_version
('x', [(0, 0, 0)], 10901)
>>> load_graph(dump_graph(g)) == g
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mxasync.base import MXAsyncError

__all__ = ["JsonNode", "JsonGraph", "Entry", "MXNET_VERSION", "HIDDEN_KEYS", "load_graph", "dump_graph"]

#: The version this module writes (MXNet 1.9.1) and upgrades older files to.
MXNET_VERSION = 10901
#: Attribute names MXNet 1.9.1 wraps in double underscores when loading an older file.
HIDDEN_KEYS = ("ctx_group", "force_mirroring", "lr_mult", "mirror_stage", "wd_mult")
_LEGACY_VERSION = 800  # what MXNet assumes for a file without mxnet_version

Entry = tuple[int, int, int]  # (node index, output index, version)

_NODE_KEYS = {"op", "name", "inputs", "attrs", "attr", "param", "control_deps", "subgraphs", "backward_source_id"}
_GRAPH_KEYS = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}


@dataclass
class JsonNode:
    """One node: ``op`` is ``"null"`` for variables; ``inputs`` are (node, output, version) entries."""

    op: str
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    inputs: list[Entry] = field(default_factory=list)
    control_deps: list[int] = field(default_factory=list)
    subgraphs: list[JsonGraph] = field(default_factory=list)

    @property
    def is_variable(self) -> bool:
        return self.op == "null"


@dataclass
class JsonGraph:
    """A whole symbol: nodes in topological order, the variable nodes, and the output entries."""

    nodes: list[JsonNode]
    arg_nodes: list[int]
    heads: list[Entry]
    attrs: dict[str, Any] = field(default_factory=lambda: {"mxnet_version": ["int", MXNET_VERSION]})
    node_row_ptr: list[int] | None = field(default=None, compare=False)  # derived data: not compared

    @property
    def mxnet_version(self) -> int | None:
        v = self.attrs.get("mxnet_version")
        return v[1] if isinstance(v, list) and len(v) == 2 and isinstance(v[1], int) else None


# ----------------------------------------------------------------------------- loading


def _err(where: str, msg: str) -> MXAsyncError:
    return MXAsyncError(f"symbol JSON: {where}: {msg}")


def _int_list(value: Any, where: str, what: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise _err(where, f"{what} must be a list of integers, got {value!r}")
    return list(value)


def _entry(value: Any, where: str) -> Entry:
    ints = _int_list(value, where, "an entry")
    if len(ints) not in (2, 3):
        raise _err(where, f"an entry must be [node, index] or [node, index, version], got {value!r}")
    return (ints[0], ints[1], ints[2] if len(ints) == 3 else 0)


def _str_dict(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _err(where, f'"{key}" must map names to strings, got {value!r}')
    return dict(value)


def _check_keys(obj: dict, where: str, required: tuple[str, ...], known: set[str]) -> None:
    for key in required:
        if key not in obj:
            raise _err(where, f'missing key "{key}"')
    unknown = set(obj) - known
    if unknown:
        raise _err(where, f"unknown keys {sorted(unknown)} (MXNet 1.9.1 refuses them)")


def _node(obj: Any, index: int, prefix: str) -> JsonNode:
    where = f"{prefix}node {index}"
    if not isinstance(obj, dict):
        raise _err(where, f"expected an object, got {obj!r}")
    if isinstance(obj.get("name"), str):
        where = f"{prefix}node {index} ({obj['name']!r})"
    _check_keys(obj, where, ("op", "name", "inputs"), _NODE_KEYS)
    if not isinstance(obj["op"], str) or not isinstance(obj["name"], str):
        raise _err(where, '"op" and "name" must be strings')
    # "attrs" and "attr" fill the same map, the later one in the file replacing the earlier;
    # "param" only adds keys neither gave (what MXNet 1.9.1 does).
    attrs: dict[str, str] = {}
    for key, value in obj.items():
        if key in ("attrs", "attr"):
            attrs = _str_dict(value, where, key)
    for key, value in _str_dict(obj.get("param", {}), where, "param").items():
        attrs.setdefault(key, value)
    if not isinstance(obj["inputs"], list):
        raise _err(where, f'"inputs" must be a list, got {obj["inputs"]!r}')
    subgraphs = obj.get("subgraphs", [])
    if not isinstance(subgraphs, list):
        raise _err(where, f'"subgraphs" must be a list, got {subgraphs!r}')
    return JsonNode(
        op=obj["op"],
        name=obj["name"],
        attrs=attrs,
        inputs=[_entry(e, f"{where} input {i}") for i, e in enumerate(obj["inputs"])],
        control_deps=_int_list(obj.get("control_deps", []), where, '"control_deps"'),
        subgraphs=[_graph(g, f"{where} subgraph {i}", upgrade=False) for i, g in enumerate(subgraphs)],
    )


def _node_desc(nodes: list[JsonNode], i: int) -> str:
    return f"node {i} ({nodes[i].name!r})"


def _check_entry(nodes: list[JsonNode], row_ptr: list[int] | None, e: Entry, limit: int, where: str) -> None:
    nid, idx, _ = e
    if not 0 <= nid < limit:
        raise _err(where, f"refers to node {nid}, but only nodes 0..{limit - 1} may be used here (dangling input)")
    if idx < 0 or row_ptr is not None and idx >= row_ptr[nid + 1] - row_ptr[nid]:
        count = "?" if row_ptr is None else row_ptr[nid + 1] - row_ptr[nid]
        raise _err(where, f"refers to output {idx} of {_node_desc(nodes, nid)}, which has {count} outputs")


def _validate(g: JsonGraph, where: str) -> None:
    n = len(g.nodes)
    if g.node_row_ptr is not None:
        rp = g.node_row_ptr
        if len(rp) != n + 1 or rp[0] != 0 or any(b < a for a, b in zip(rp, rp[1:], strict=False)):
            raise _err(where, f"node_row_ptr {rp} does not fit {n} nodes")
    for i, node in enumerate(g.nodes):
        desc = f"{where}{_node_desc(g.nodes, i)}"
        for k, e in enumerate(node.inputs):  # inputs come before their users: no cycles
            _check_entry(g.nodes, g.node_row_ptr, e, i, f"{desc} input {k}")
        for d in node.control_deps:
            if not 0 <= d < i:
                raise _err(desc, f"control dependency on node {d} is not an earlier node")
        for k, sub in enumerate(node.subgraphs):
            _validate(sub, f"{desc} subgraph {k}: ")
    for k, e in enumerate(g.heads):
        _check_entry(g.nodes, g.node_row_ptr, e, n, f"{where}head {k}")
    for a in g.arg_nodes:
        if not 0 <= a < n:
            raise _err(f"{where}arg_nodes", f"index {a} is not a node")
        if not g.nodes[a].is_variable:
            raise _err(f"{where}arg_nodes", f"{_node_desc(g.nodes, a)} is an operator ({g.nodes[a].op}), not a variable")


def _upgrade_hidden_keys(attrs: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in attrs.items() if k not in HIDDEN_KEYS}
    for key in HIDDEN_KEYS:
        if key in attrs:
            out[f"__{key}__"] = attrs[key]
    return out


def _graph(obj: Any, where: str, upgrade: bool) -> JsonGraph:
    if not isinstance(obj, dict):
        raise _err(where, f"expected an object, got {type(obj).__name__}")
    _check_keys(obj, where, ("nodes", "arg_nodes", "heads"), _GRAPH_KEYS)
    if not isinstance(obj["nodes"], list) or not isinstance(obj["heads"], list):
        raise _err(where, '"nodes" and "heads" must be lists')
    attrs = obj.get("attrs", {})
    if not isinstance(attrs, dict):
        raise _err(where, f'"attrs" must be an object, got {attrs!r}')
    row_ptr = obj.get("node_row_ptr")
    g = JsonGraph(
        nodes=[_node(n, i, "" if where == "graph" else f"{where}: ") for i, n in enumerate(obj["nodes"])],
        arg_nodes=_int_list(obj["arg_nodes"], where, '"arg_nodes"'),
        heads=[_entry(e, f"{where} head {i}") for i, e in enumerate(obj["heads"])],
        attrs=dict(attrs),
        node_row_ptr=None if row_ptr is None else _int_list(row_ptr, where, '"node_row_ptr"'),
    )
    if upgrade:
        version = g.mxnet_version
        if version is None or version < MXNET_VERSION:
            for node in g.nodes:  # MXNet does this for the top graph only
                node.attrs = _upgrade_hidden_keys(node.attrs)
            g.attrs["mxnet_version"] = ["int", MXNET_VERSION]
    return g


def load_graph(text: str | bytes | Mapping[str, Any]) -> JsonGraph:
    """Parse symbol JSON (text, bytes or an already parsed dict) into a :class:`JsonGraph`."""
    if isinstance(text, Mapping):
        obj: Any = dict(text)
    else:
        try:
            # strict=False: MXNet writes control characters other than \t \n \r unescaped
            obj = json.loads(text, strict=False)
        except ValueError as exc:
            raise MXAsyncError(f"symbol JSON: not valid JSON: {exc}") from None
        except RecursionError:
            raise MXAsyncError("symbol JSON: nested too deeply to be a symbol (arrays or objects "
                               "inside each other beyond Python's recursion limit)") from None
    g = _graph(obj, "graph", upgrade=True)
    _validate(g, "")
    return g


# ----------------------------------------------------------------------------- dumping

_ESCAPES = {"\r": "\\r", "\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}


def _str(s: str) -> str:
    # dmlc's JSONWriter escapes only these five; everything else is written as is.
    return '"' + "".join(_ESCAPES.get(c, c) for c in s) + '"'


class _Writer:
    """The layout of dmlc::JSONWriter, which MXNet's tojson() uses."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.depth = 0

    def _sep(self, multi: bool) -> None:
        if multi:
            self.out.append("\n" + "  " * self.depth)

    def obj(self, items: list[tuple[str, Callable[[], None]]], multi: bool) -> None:
        self.out.append("{")
        self.depth += 1
        for i, (key, write) in enumerate(items):
            if i:
                self.out.append(", ")
            self._sep(multi)
            self.out.append(f"{_str(key)}: ")
            write()
        self.depth -= 1
        self._sep(multi)
        self.out.append("}")

    def arr(self, writers: list[Callable[[], None]], multi: bool) -> None:
        self.out.append("[")
        self.depth += 1
        for i, write in enumerate(writers):
            if i:
                self.out.append(", ")
            self._sep(multi)
            write()
        self.depth -= 1
        self._sep(multi)
        self.out.append("]")

    def value(self, v: Any) -> None:
        """Containers as dmlc writes STL ones: lists multi-line past 10 items, maps past 1."""
        if isinstance(v, str):
            self.out.append(_str(v))
        elif isinstance(v, bool) or v is None:
            self.out.append(json.dumps(v))
        elif isinstance(v, (int, float)):
            self.out.append(str(v))
        elif isinstance(v, (list, tuple)):
            self.arr([lambda x=x: self.value(x) for x in v], multi=len(v) > 10)
        elif isinstance(v, Mapping):
            keys = sorted(v)
            self.obj([(k, lambda k=k: self.value(v[k])) for k in keys], multi=len(keys) > 1)
        else:
            raise MXAsyncError(f"symbol JSON: cannot write a value of type {type(v).__name__}: {v!r}")


def _row_ptr(g: JsonGraph, num_outputs: Callable[[JsonNode], int] | None) -> list[int]:
    if g.node_row_ptr is not None:
        return g.node_row_ptr
    counts = [1] * len(g.nodes)
    if num_outputs is not None:
        counts = [int(num_outputs(n)) for n in g.nodes]
    else:  # without op knowledge: as many outputs as the highest one used
        for node in g.nodes:
            for nid, idx, _ in node.inputs:
                counts[nid] = max(counts[nid], idx + 1)
        for nid, idx, _ in g.heads:
            counts[nid] = max(counts[nid], idx + 1)
    out = [0]
    for c in counts:
        out.append(out[-1] + c)
    return out


def _write_graph(w: _Writer, g: JsonGraph, num_outputs: Callable[[JsonNode], int] | None) -> None:
    def entries(es: list[Entry]) -> Callable[[], None]:
        return lambda: w.arr([lambda e=e: w.value(list(e)) for e in es], multi=len(es) > 10)

    def node(n: JsonNode) -> Callable[[], None]:
        items: list[tuple[str, Callable[[], None]]] = [("op", lambda: w.value(n.op)), ("name", lambda: w.value(n.name))]
        if n.attrs:
            items.append(("attrs", lambda: w.value(n.attrs)))
        items.append(("inputs", entries(n.inputs)))
        if n.control_deps:
            items.append(("control_deps", lambda: w.value(n.control_deps)))
        if n.subgraphs:
            items.append(("subgraphs", lambda: w.arr([lambda s=s: _write_graph(w, s, num_outputs) for s in n.subgraphs],
                                                     multi=True)))
        return lambda: w.obj(items, multi=True)

    items = [
        ("nodes", lambda: w.arr([node(n) for n in g.nodes], multi=True)),
        ("arg_nodes", lambda: w.value(g.arg_nodes)),
        ("node_row_ptr", lambda: w.value(_row_ptr(g, num_outputs))),
        ("heads", entries(g.heads)),
    ]
    if g.attrs:
        items.append(("attrs", lambda: w.value(g.attrs)))
    w.obj(items, multi=True)


def dump_graph(graph: JsonGraph, *, num_outputs: Callable[[JsonNode], int] | None = None) -> str:
    """The text MXNet 1.9.1's ``tojson()`` writes for ``graph``.

    A missing ``mxnet_version`` is written as 10901 (else MXNet would treat the file as
    v0.8). ``node_row_ptr`` comes from the graph, else from ``num_outputs(node)``, else
    from the highest output index each node's users refer to (MXNet ignores it on load).
    """
    _validate(graph, "")
    if graph.mxnet_version is None:
        graph = JsonGraph(graph.nodes, graph.arg_nodes, graph.heads,
                          {**graph.attrs, "mxnet_version": ["int", MXNET_VERSION]}, graph.node_row_ptr)
    w = _Writer()
    _write_graph(w, graph, num_outputs)
    return "".join(w.out)
