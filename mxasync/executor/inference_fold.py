"""Inference BatchNorm folded into the convolution before it, and a ReLU after it run in place.

At inference (``forward(is_train=False)``) a BatchNorm is a per-channel scale and shift with its
moving statistics, so ``Convolution -> BatchNorm [-> relu]`` equals one convolution with the weight
scaled by ``s = gamma / sqrt(var + eps)`` per filter and the bias ``s * (bias - mean) + beta``
(``fix_gamma``: gamma is 1), followed by the relu on the convolution's own output.  That saves the
BatchNorm's two passes over the data (MXNet's MKLDNN backend fuses the same at inference).

The executor runs such a chain as pushes on the one op path: a *fold* that writes the scaled
weight and bias into the executor's own arrays (skipped while the parameters' engine vars keep the
versions it last folded: a var's version counts its completed writes, so it moves with every
in-place update, initialisation or ``set_data``), then the convolution with that bias.  With a relu
on float32 host data that is MXNet's fused ``_sg_mkldnn_conv`` (``with_act``), whose kernel applies
bias and relu in its last copy while the output is in cache; otherwise the ``Convolution`` op and
the ``Activation`` op in place.  The symbol is untouched (``tojson``, arguments and aux states stay),
training forwards and monitored runs use the unfused ops, and a chain is left alone when anything
else reads the convolution's or BatchNorm's output, when a graph op could write one of the
parameters, and outside float32/float64 dense NCHW-like layouts.

>>> import mxasync as mx
>>> x = mx.sym.var('data')
>>> y = mx.sym.Activation(mx.sym.BatchNorm(mx.sym.Convolution(x, kernel=(1, 1), num_filter=2, name='c'),
...                                       name='bn'), act_type='relu', name='r')
>>> ex = y.simple_bind(mx.cpu(), data=(1, 3, 2, 2), grad_req='null')
>>> [f.names for f in ex._folds]
[('c', 'bn', 'r')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..ndarray.ndarray import zeros
from ..operator.base import WRITE_INPLACE, WRITE_TO
from ..operator.kernels.batch_norm import fold_into_conv
from ..operator.registry import get_op
from ..operator.step import ForwardPlan, Launch
from ..symbol._node import op_params

__all__ = ["Fold", "find_folds", "fold_plan_reads", "compile_fold"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class Fold:
    """One ``Convolution -> BatchNorm [-> relu]`` chain of the graph (node ids and entry ids)."""

    conv: int
    bn: int
    act: int | None
    conv_args: tuple[int, ...]  # data, weight[, bias]
    bn_params: tuple[int, ...]  # gamma, beta, moving mean, moving var
    target: int                 # the chain's last output: the BatchNorm's, or the relu's
    names: tuple[str, ...]

    @property
    def nodes(self) -> tuple[int, ...]:
        return (self.conv, self.bn) + ((self.act,) if self.act is not None else ())


def _readers(ops) -> dict[int, int]:
    count: dict[int, int] = {}
    for op in ops:
        for e in op.reads:
            count[e] = count.get(e, 0) + 1
    return count


def _written_by_graph(g, ops) -> set[int]:
    """Entries an op of the graph may write besides its outputs: aux states and mutated inputs."""
    written: set[int] = set()
    for op in ops:
        if op.kind != "forward":
            continue
        args, aux = g.split_inputs(op.nid)
        written.update(aux)
        written.update(args[i] for i in g.nodes[op.nid].prop.mutate_inputs())
    return written


def find_folds(g, fwd_ops, all_ops, entries, sparse: bool) -> list[Fold]:
    """The chains of forward ops ``fwd_ops`` that can run folded at inference."""
    if sparse:
        return []
    readers, heads = _readers(all_ops), set(g.heads)
    by_input: dict[int, list] = {}
    for op in fwd_ops:
        for e in op.reads:
            by_input.setdefault(e, []).append(op.nid)
    folds = []
    for op in fwd_ops:
        conv = g.nodes[op.nid]
        if conv.op.name != "Convolution":
            continue
        out = g.entry_ptr[op.nid]
        users = by_input.get(out, [])
        if out in heads or readers.get(out, 0) != 1 or len(users) != 1:
            continue
        fold = _chain(g, op.nid, users[0], readers, heads, by_input, entries)
        if fold is not None:
            folds.append(fold)
    others = _written_by_graph(g, [o for o in fwd_ops if not any(o.nid in f.nodes for f in folds)])
    return [f for f in folds if not others.intersection(f.conv_args[1:] + f.bn_params)]


def _chain(g, cid, bid, readers, heads, by_input, entries) -> Fold | None:
    conv, bn = g.nodes[cid], g.nodes[bid]
    if bn.op.name != "BatchNorm" or bn.prop.params.axis != 1:
        return None
    layout = conv.prop.params.layout
    if layout is not None and not layout.startswith("NC"):
        return None
    conv_args, _ = g.split_inputs(cid)
    bn_args, bn_aux = g.split_inputs(bid)
    if bn_args[0] != g.entry_ptr[cid] or any(entries[e].dtype not in _FLOATS for e in conv_args):
        return None
    bn_out = g.entry_ptr[bid]
    hidden = range(bn_out + 1, g.entry_ptr[bid + 1])  # saved mean and var: nobody may read them
    if any(readers.get(e, 0) or e in heads for e in hidden):
        return None
    act, target, names = None, bn_out, (conv.name, bn.name)
    users = by_input.get(bn_out, [])
    if bn_out not in heads and readers.get(bn_out, 0) == 1 and len(users) == 1:
        node = g.nodes[users[0]]
        if node.op.name == "Activation" and node.prop.params.act_type == "relu":
            act, target, names = users[0], g.entry_ptr[users[0]], names + (node.name,)
    return Fold(cid, bid, act, tuple(conv_args), tuple(bn_args[1:]) + tuple(bn_aux), target, names)


def fold_plan_reads(folds: list[Fold]) -> dict[int, list[int]]:
    """Extra reads per node for the memory planner: the convolution's inputs stay live until the
    chain's end, so the folded push, which reads them and writes the chain's last output, never
    has that output share a block with them."""
    extra: dict[int, list[int]] = {}
    for f in folds:
        for nid in f.nodes[1:]:
            extra[nid] = list(f.conv_args)
    return extra


def compile_fold(g, fold: Fold, arrays: list, ctx, xp) -> list[Launch]:
    """The folded chain's pushes for an inference forward: fold, convolution with bias, relu in place."""
    conv = g.nodes[fold.conv]
    x, w = arrays[fold.conv_args[0]], arrays[fold.conv_args[1]]
    bias = arrays[fold.conv_args[2]] if len(fold.conv_args) > 2 else None
    w_fold = zeros(w.shape, ctx, w.dtype)
    b_fold = zeros((w.shape[0],), ctx, w.dtype)
    bn = g.nodes[fold.bn].prop.params
    gamma, beta, mean, var = (arrays[e] for e in fold.bn_params)
    sources = [w, gamma, beta, mean, var] + ([bias] if bias is not None else [])
    launches = [_fold_launch(xp, f"{fold.names[1]}_fold", sources, w_fold, b_fold, bn.eps, bn.fix_gamma)]
    conv_attrs = {**op_params(conv.attrs), "no_bias": "False"}
    target = arrays[fold.target]
    if fold.act is not None and ctx.device_type == "cpu" and w.dtype == np.float32:
        fused = get_op("_sg_mkldnn_conv").prepare(with_act="True", subgraph=_conv_relu_subgraph(conv_attrs),
                                                  name=conv.name)
        plan = ForwardPlan(fused, ctx, False, f"{conv.name}_folded")
        return launches + [plan.launch([x, w_fold, b_fold], [target], req=[WRITE_TO])]
    with_bias = get_op("Convolution").prepare(**conv_attrs, name=conv.name)
    launches.append(ForwardPlan(with_bias, ctx, False, f"{conv.name}_folded").launch([x, w_fold, b_fold], [target],
                                                                                       req=[WRITE_TO]))
    if fold.act is not None:
        act = g.nodes[fold.act]
        launches.append(ForwardPlan(act.prop, ctx, False, act.name).launch([target], [target], req=[WRITE_INPLACE]))
    return launches


def _conv_relu_subgraph(conv_attrs: dict) -> str:
    """The subgraph JSON ``_sg_mkldnn_conv`` carries: Convolution (data, weight, bias) then relu."""
    names = ("data", "weight", "bias")
    nodes = [{"op": "null", "name": n, "inputs": []} for n in names]
    nodes.append({"op": "Convolution", "name": "conv", "attrs": conv_attrs, "inputs": [[k, 0, 0] for k in range(3)]})
    nodes.append({"op": "Activation", "name": "relu", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]})
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[4, 0, 0]]})


def _fold_launch(xp, name: str, sources: list, w_fold, b_fold, eps: float, fix_gamma: bool) -> Launch:
    """The push writing the folded weight and bias (:func:`fold_into_conv`) into ``w_fold`` / ``b_fold``; it reads
    the sources' var versions when it runs (no write to them can be in flight then) and skips the
    arithmetic while they are those it last folded."""
    src_vars = [a._chunk.var for a in sources]
    raw = [a._data for a in sources]
    wf, bf = w_fold._data, b_fold._data
    last: list = [None]

    def run(rctx, _owned=(w_fold, b_fold)):  # the push owns the arrays: their vars live as long as it
        versions = tuple(v.version for v in src_vars)
        if versions == last[0]:
            return
        w, gamma, beta, mean, var = raw[:5]
        fold_into_conv(xp, w, raw[5] if len(raw) > 5 else None, gamma, beta, mean, var, eps, fix_gamma,
                       out_weight=wf, out_bias=bf)
        last[0] = versions

    reads = list(dict.fromkeys(src_vars))
    return Launch(name, run, reads, [w_fold._chunk.var, b_fold._chunk.var])
