"""MXNet's ``MKLDNN_QUANTIZE`` fusion (``sym.get_backend_symbol('MKLDNN_QUANTIZE')`` before quantizing):
Convolution [+ BatchNorm] [+ elemwise_add] [+ relu] into ``_sg_mkldnn_conv`` and FullyConnected
[+ relu] into ``_sg_mkldnn_fully_connected``, each node carrying its subgraph, named as MXNet names
them (``sg_mkldnn_conv_bn_add_act_2``, ``sg_mkldnn_fully_connected_0``).

A chain grows from an op while the op's output has exactly one user (MXNet's selectors stop at
an internal branch), in the order MXNet's state machines allow: BatchNorm, then the sum, then one
activation (relu, leaky / gelu LeakyReLU, clip from 0 except after a sum).
"""

from __future__ import annotations

from ._graph import Graph, GraphBuilder

__all__ = ["fuse_mkldnn"]


def _is_act(node: dict, after_sum: bool) -> bool:
    op, attrs = node["op"], node["attrs"]
    if op == "Activation":
        return attrs.get("act_type") == "relu"
    if op == "LeakyReLU":
        return attrs.get("act_type", "leaky") in ("leaky", "gelu")
    if op == "clip":
        return not after_sum and float(attrs.get("a_min", "0")) == 0.0
    return False


def _chain(g: Graph, start: int, users, taken: set[int], fc: bool) -> list[int]:
    """The node indices fused with ``start`` (Convolution or FullyConnected)."""
    chain, state = [start], "start"
    while True:
        outs = users.get((chain[-1], 0), [])
        if len(outs) != 1 or outs[0][0] < 0 or outs[0][0] in taken:
            return chain
        nxt_i = outs[0][0]
        nxt = g.nodes[nxt_i]
        if fc:
            return chain + [nxt_i] if _is_act(nxt, False) or nxt["op"] == "abs" else chain
        if state == "start" and nxt["op"] == "BatchNorm" and outs[0][1] == 0:
            chain.append(nxt_i)
            state = "bn"
        elif state in ("start", "bn") and nxt["op"] == "elemwise_add":
            chain.append(nxt_i)
            state = "sum"
        elif _is_act(nxt, state == "sum"):
            return chain + [nxt_i]
        else:
            return chain


def _kernel_ndim(node: dict) -> int:
    return len([d for d in node["attrs"].get("kernel", "()").strip("()[] ").split(",") if d.strip()])


def _subgraph(g: Graph, chain: list[int], var_name) -> tuple[dict, list[list[int]]]:
    """The chain as a subgraph JSON and the outer entries that feed its inputs, in MXNet's order
    (the chain's own input first at a sum: the other operand becomes the ``sum`` input)."""
    sub, outer, local = [], [], {}

    def var_for(entry):
        src, idx, ver = entry
        sub.append({"op": "null", "name": var_name(src, idx), "inputs": []})
        outer.append([src, idx, ver])
        return [len(sub) - 1, 0, 0]

    for i in chain:
        n = g.nodes[i]
        inputs = list(n["inputs"])
        if n["op"] == "elemwise_add" and inputs[0][0] not in local:  # chain operand first
            inputs = inputs[::-1]
        ins = [[local[e[0]], e[1], 0] if e[0] in local else var_for(e) for e in inputs]
        sub.append({"op": n["op"], "name": n["name"], "attrs": n["attrs"], "inputs": ins})
        local[i] = len(sub) - 1
    arg_nodes = [j for j, n in enumerate(sub) if n["op"] == "null"]
    return {"nodes": sub, "arg_nodes": arg_nodes, "heads": [[len(sub) - 1, 0, 0]]}, outer


def _conv_node(g: Graph, chain: list[int], ident: int) -> tuple[str, dict]:
    parts, attrs, seen_sum = ["conv"], {}, False
    for i in chain[1:]:
        op = g.nodes[i]["op"]
        if op == "BatchNorm":
            parts.append("bn")
            attrs["with_bn"] = "true"
        elif op == "elemwise_add":
            parts.append("add")
            attrs["with_sum"] = "true"
            seen_sum = True
        else:
            parts.append("act")
            attrs["with_postsum_act" if seen_sum else "with_act"] = "true"
    return f"sg_mkldnn_{'_'.join(parts)}_{ident}", attrs


def fuse_mkldnn(sym, *, fuse_fc: bool = True):
    """``sym`` with MXNet's MKLDNN conv and FC fusions (float32 ops; quantizing follows)."""
    g = Graph.from_symbol(sym)
    users = g.consumers()
    taken: set[int] = set()
    fused: dict[int, tuple[list[int], str, dict, str]] = {}  # last chain node -> its fused node
    for kind, op in (("conv", "Convolution"), ("fc", "FullyConnected")):
        if kind == "fc" and not fuse_fc:
            continue
        ident = 0
        for i, n in enumerate(g.nodes):
            if n["op"] != op or i in taken:
                continue
            if kind == "conv" and _kernel_ndim(n) not in (2, 3):
                continue
            chain = _chain(g, i, users, taken, fc=kind == "fc")
            taken.update(chain)
            if kind == "conv":
                name, attrs = _conv_node(g, chain, ident)
                fused[chain[-1]] = (chain, name, attrs, "_sg_mkldnn_conv")
            else:
                eltwise = len(chain) > 1
                name = f"sg_mkldnn_fully_connected_{'eltwise_' if eltwise else ''}{ident}"
                fused[chain[-1]] = (chain, name, {"with_eltwise": "True"} if eltwise else {}, "_sg_mkldnn_fully_connected")
            ident += 1
    return _rebuild(g, fused, taken)


def _rebuild(g: Graph, fused, taken):
    b, where = GraphBuilder(), {}  # old node index -> new (a fused chain: its last node)

    def entry(e):
        return [where[e[0]], e[1], e[2]]

    def var_name(src, idx):  # MXNet names a subgraph input after the (new) node feeding it
        n = b.nodes[where[src]]
        return f"{n['name']}{idx}" if n["op"] == "null" else f"{n['name']}_output{idx}"

    for i in _order_with_fused(g, fused, taken):
        if i in fused:
            chain, name, attrs, op = fused[i]
            sub, outer = _subgraph(g, chain, var_name)
            where[i] = b.add(op, name, [entry(e) for e in outer], attrs, subgraphs=[sub])
        else:
            n = g.nodes[i]
            where[i] = b.add(n["op"], n["name"], [entry(e) for e in n["inputs"]], n["attrs"],
                             subgraphs=n.get("subgraphs"))
    return Graph(b.nodes, [entry(h) for h in g.heads]).to_symbol()


def _order_with_fused(g: Graph, fused, taken) -> list[int]:
    """Node indices to emit: untouched nodes, and each fused chain at its last node once its outer
    inputs exist (a topological order of the new graph)."""
    outer_inputs = {last: {e[0] for c in chain for e in g.nodes[c]["inputs"]} - set(chain)
                    for last, (chain, *_rest) in fused.items()}
    emitted, order = set(), []
    pending = [i for i in range(len(g.nodes)) if i not in taken or i in fused]

    def ready(i):
        deps = outer_inputs[i] if i in fused else {e[0] for e in g.nodes[i]["inputs"]}
        return all(_emitted_as(d, fused, taken, emitted) for d in deps)

    while pending:
        rest = []
        for i in pending:
            if ready(i):
                order.append(i)
                emitted.add(i)
            else:
                rest.append(i)
        if len(rest) == len(pending):
            raise ValueError("fuse_mkldnn: the fused graph has a cycle")
        pending = rest
    return order


def _emitted_as(d, fused, taken, emitted) -> bool:
    if d in emitted:
        return True
    if d in taken and d not in fused:  # an inner node of a chain: its fused node stands for it
        last = next(k for k, v in fused.items() if d in v[0])
        return last in emitted
    return False
