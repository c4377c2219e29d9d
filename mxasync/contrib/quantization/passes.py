"""The quantize pass (MXNet's ``MXQuantizeSymbol``), the calibration table (``MXSetCalibTableToQuantizedSymbol``)
and the post-quantize fusion of MKLDNN (requantize into the fused ops, dequantize into FullyConnected).

Quantized here: the fused ``_sg_mkldnn_conv`` / ``_sg_mkldnn_fully_connected`` and ``elemwise_add``
(their float inputs go through ``_contrib_quantize_v2``), and Pooling (max / avg), Flatten, relu
and Concat when their data is already quantized (MXNet's quantizes these in 'full' mode on float
data as well; a quantize-pool-dequantize round trip gains nothing).  An int32 result goes through
``_contrib_requantize``; a float consumer or a graph output gets ``_contrib_dequantize``.
FullyConnected weights and biases are quantized offline (``<name>_quantize`` with ``_min`` /
``_max`` inputs, filled by :func:`quantize_params`), as are those of the unfused Convolution and
FullyConnected that ``quantize_model`` (without MKLDNN fusion) turns into ``_contrib_quantized_conv`` /
``_contrib_quantized_fully_connected``.
"""

from __future__ import annotations

import json

from ...operator import get_op
from ...operator.quantization.mkldnn_conv import SgConvParam, conv_argument_names
from ...symbol._node import op_params
from ._graph import Graph, GraphBuilder, entry_name

__all__ = ["quantize_symbol", "set_calib_table", "post_quantize", "INT32_OUTPUT"]

_PASS_THROUGH = {"Pooling": "_contrib_quantized_pooling", "Flatten": "_contrib_quantized_flatten",
                 "flatten": "_contrib_quantized_flatten", "Activation": "_contrib_quantized_act",
                 "Concat": "_contrib_quantized_concat", "concat": "_contrib_quantized_concat"}
INT32_OUTPUT = ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected", "_contrib_quantized_elemwise_add")
_WITH_OFFLINE_PARAMS = {"Convolution": "_contrib_quantized_conv", "FullyConnected": "_contrib_quantized_fully_connected"}


def _quantizable(node: dict, excluded_names, excluded_ops) -> bool:
    op = node["op"]
    if node["name"] in excluded_names or op in excluded_ops or op == "null":
        return False
    if op == "Pooling":
        return node["attrs"].get("pool_type", "max") in ("max", "avg")
    if op == "Activation":
        return node["attrs"].get("act_type") == "relu"
    return op in INT32_OUTPUT[:2] or op == "elemwise_add" or op in _PASS_THROUGH or op in _WITH_OFFLINE_PARAMS


class _Quantizer:
    def __init__(self, g: Graph, quantized_dtype: str, offline: set[str], channel_wise: bool):
        self.g, self.dtype, self.offline, self.channel_wise = g, quantized_dtype, offline, channel_wise
        self.b = GraphBuilder()
        self.float_of: dict[tuple[int, int], list] = {}   # old entry -> new float entry
        self.quant_of: dict[tuple[int, int], tuple] = {}  # old entry -> (q, min, max) new entries
        self.calib_layers: list[str] = []

    def float_entry(self, e):
        key = (e[0], e[1])
        if key not in self.float_of:
            q, _, _ = self.quant_of[key]
            name = self.b.nodes[q[0]]["name"]
            d = self.b.add("_contrib_dequantize", f"{name}_dequantize", list(self.quant_of[key]))
            self.float_of[key] = [d, 0, 0]
        return self.float_of[key]

    def quant_entry(self, e):
        key = (e[0], e[1])
        if key not in self.quant_of:
            src = self.g.nodes[e[0]]
            self.calib_layers.append(entry_name(src, e[1]))
            q = self.b.add("_contrib_quantize_v2", f"{src['name']}_quantize", [self.float_of[key]],
                           {"out_type": self.dtype})
            self.quant_of[key] = ([q, 0, 0], [q, 1, 0], [q, 2, 0])
        return self.quant_of[key]

    def emit_quantized(self, i: int, node: dict):
        op, name = node["op"], f"quantized_{node['name']}"
        ins = node["inputs"]
        if op == "_sg_mkldnn_conv":
            sum_pos = _sum_position(node)
            data = self.quant_entry(ins[0])
            summed = self.quant_entry(ins[sum_pos]) if sum_pos is not None else None
            inputs = [data[0]] + [self.float_entry(e) if k != sum_pos else summed[0] for k, e in enumerate(ins[1:], 1)]
            inputs += [data[1], data[2]] + ([summed[1], summed[2]] if summed else [])
            new = self.b.add(op, name, inputs, {**node["attrs"], "quantized": "true"}, node.get("subgraphs"))
        elif op == "_sg_mkldnn_fully_connected" and self.channel_wise:  # float weights, scaled per channel
            data = self.quant_entry(ins[0])
            inputs = [data[0]] + [self.float_entry(e) for e in ins[1:]] + [data[1], data[2]]
            attrs = {**node["attrs"], "quantized": "True", "channel_wise_quantize": "True"}
            new = self.b.add(op, name, inputs, attrs, node.get("subgraphs"))
        elif op == "_sg_mkldnn_fully_connected":
            data = self.quant_entry(ins[0])
            params = [self._offline(e) for e in ins[1:]]
            inputs = [data[0]] + [p[0] for p in params] + [data[1], data[2]] + [r for p in params for r in p[1:]]
            new = self.b.add(op, name, inputs, {**node["attrs"], "quantized": "True"}, node.get("subgraphs"))
        elif op in _WITH_OFFLINE_PARAMS:  # an unfused graph (quantize_model): int8 weights made offline
            data = self.quant_entry(ins[0])
            params = [self._offline(e) for e in ins[1:]]
            inputs = [data[0]] + [p[0] for p in params] + [data[1], data[2]] + [r for p in params for r in p[1:]]
            new = self.b.add(_WITH_OFFLINE_PARAMS[op], name, inputs, node["attrs"])
        elif op == "elemwise_add":
            a, c = self.quant_entry(ins[0]), self.quant_entry(ins[1])
            new = self.b.add("_contrib_quantized_elemwise_add", name, [a[0], c[0], a[1], a[2], c[1], c[2]])
        else:
            qs = [self.quant_entry(e) for e in ins]
            inputs = [q[0] for q in qs] + [r for q in qs for r in q[1:]]
            new = self.b.add(_PASS_THROUGH[op], name, inputs, node["attrs"])
        out = ([new, 0, 0], [new, 1, 0], [new, 2, 0])
        if op in INT32_OUTPUT[:2] or op == "elemwise_add" or op in _WITH_OFFLINE_PARAMS:
            self.calib_layers.append(entry_name(node, 0))
            r = self.b.add("_contrib_requantize", f"{name}_requantize", list(out), {"out_type": self.dtype})
            out = ([r, 0, 0], [r, 1, 0], [r, 2, 0])
        self.quant_of[(i, 0)] = out

    def _offline(self, e):
        """A FullyConnected weight / bias quantized ahead of time: three new variables."""
        src = self.g.nodes[e[0]]
        if src["op"] != "null" or src["name"] not in self.offline:
            raise ValueError(f"quantize: weight / bias input {src['name']!r} must be a parameter with a value")
        base = f"{src['name']}_quantize"
        return [[self.b.variable(n), 0, 0] for n in (base, f"{base}_min", f"{base}_max")]


def _sum_position(node: dict):
    if node["attrs"].get("with_sum", "false").lower() != "true":
        return None
    sub = json.dumps(node["subgraphs"][0])
    p = SgConvParam(with_bn=node["attrs"].get("with_bn", "false").lower() == "true", with_sum=True,
                    with_act=node["attrs"].get("with_act", "false").lower() == "true", subgraph=sub)
    return conv_argument_names(p).index("sum")


def quantize_symbol(sym, excluded_sym_names=(), excluded_op_names=(), offline_params=(), quantized_dtype="int8",
                    quantize_granularity="tensor-wise"):
    """(quantized symbol, names of the float outputs to calibrate), MXNet's ``_quantize_symbol``;
    channel-wise granularity keeps FullyConnected weights in float32, scaled per output channel."""
    g = Graph.from_symbol(sym)
    qz = _Quantizer(g, quantized_dtype, set(offline_params), quantize_granularity == "channel-wise")
    for i, node in enumerate(g.nodes):
        data_quantized = bool(node["inputs"]) and (node["inputs"][0][0], node["inputs"][0][1]) in qz.quant_of
        wanted = _quantizable(node, set(excluded_sym_names), set(excluded_op_names))
        if wanted and (node["op"] not in _PASS_THROUGH or data_quantized and all(
                (e[0], e[1]) in qz.quant_of for e in node["inputs"])):
            qz.emit_quantized(i, node)
            continue
        new = qz.b.add(node["op"], node["name"], [qz.float_entry(e) for e in node["inputs"]], node["attrs"],
                       node.get("subgraphs"))
        for k in range(_num_outputs(node)):
            qz.float_of[(i, k)] = [new, k, 0]
    heads = [qz.float_entry(h) for h in g.heads]
    return Graph(qz.b.nodes, heads).to_symbol(), list(dict.fromkeys(qz.calib_layers))


def _num_outputs(node: dict) -> int:
    if node["op"] == "null":
        return 1
    attrs = dict(node["attrs"])
    if node.get("subgraphs"):
        attrs["subgraph"] = json.dumps(node["subgraphs"][0])
    return get_op(node["op"]).prepare(**op_params(attrs)).num_outputs()


def set_calib_table(qsym, th_dict: dict):
    """Write calibrated ranges as MXNet does: on each ``_contrib_quantize_v2`` (from its input's
    name) and each ``_contrib_requantize`` (from ``X_output`` of its ``quantized_X`` producer)."""
    g = Graph.from_symbol(qsym)
    for node in g.nodes:
        key = None
        if node["op"] == "_contrib_quantize_v2":
            src, idx, _ = node["inputs"][0]
            key = entry_name(g.nodes[src], idx)
        elif node["op"] == "_contrib_requantize":
            src = g.nodes[node["inputs"][0][0]]["name"]
            key = f"{src[len('quantized_'):]}_output" if src.startswith("quantized_") else None
        if key in th_dict:
            lo, hi = th_dict[key]
            node["attrs"]["min_calib_range"] = _float_str(lo)
            node["attrs"]["max_calib_range"] = _float_str(hi)
    return g.to_symbol()


def _float_str(v) -> str:
    return f"{float(v):.6f}" if abs(float(v)) >= 1e-4 else repr(float(v))


def post_quantize(qsym):
    """MKLDNN's post-quantize fusion: a calibrated requantize folds into the fused op (its range
    becomes the op's ``min/max_calib_range``); a FullyConnected whose requantized output is only
    dequantized gives float32 itself (``enable_float_output``)."""
    g = Graph.from_symbol(qsym)
    users = g.consumers()
    redirect: dict[tuple[int, int], tuple[int, int]] = {}
    dropped: set[int] = set()
    for i, node in enumerate(g.nodes):
        if node["op"] != "_contrib_requantize" or "min_calib_range" not in node["attrs"]:
            continue
        src = node["inputs"][0][0]
        producer = g.nodes[src]
        if producer["op"] not in INT32_OUTPUT or len(users[(src, 0)]) != 1:
            continue
        outs = [u for k in range(3) for u in users.get((i, k), [])]
        if producer["op"] == "_sg_mkldnn_fully_connected" and outs and all(
                u[0] >= 0 and g.nodes[u[0]]["op"] == "_contrib_dequantize" for u in outs):
            producer["attrs"]["enable_float_output"] = "True"
            for u in {u[0] for u in outs}:
                redirect[(u, 0)] = (src, 0)
                dropped.add(u)
        else:
            producer["attrs"]["min_calib_range"] = node["attrs"]["min_calib_range"]
            producer["attrs"]["max_calib_range"] = node["attrs"]["max_calib_range"]
            for k in range(3):
                redirect[(i, k)] = (src, k)
        dropped.add(i)
    return _drop(g, redirect, dropped).to_symbol()


def _drop(g: Graph, redirect, dropped) -> Graph:
    b, where = GraphBuilder(), {}

    def entry(e):
        src, idx = redirect.get((e[0], e[1]), (e[0], e[1]))
        return [where[src], idx, e[2]]

    for i, node in enumerate(g.nodes):
        if i not in dropped:
            where[i] = b.add(node["op"], node["name"], [entry(e) for e in node["inputs"]], node["attrs"],
                             node.get("subgraphs"))
    return Graph(b.nodes, [entry(h) for h in g.heads])
