"""Storage types in a bound graph (MXNet's InferStorageType pass) and the steps that run the ops
touching sparse arrays.

A graph binds in sparse mode when one of its arrays is sparse or a variable declares
``stype``.  Each forward entry then gets the storage type its op's ``infer_storage_type`` gives;
sparse entries get their own arrays (they are not planned).  Ops that read or write a sparse
array run through :mod:`mxasync.operator.sparse.dispatch`: their sparse kernel, or the dense
kernel on dense copies (MXNet's storage fallback); gradients land in each gradient buffer's
storage type, through the op's sparse backward when it has one for those types.
"""

from __future__ import annotations

import numpy as np

from ..operator import OpContext
from ..operator.base import ADD_TO, NULL, WRITE_TO
from ..operator.sparse import storage as st
from ..operator.sparse.dispatch import dense_backward, execute, plan_for, store, value_of
from ..operator.sparse.storage import DEFAULT, SparseStore
from ..runtime.resource import ResourceManager

__all__ = ["var_stype", "infer_stypes", "grad_stype", "compile_sparse"]

_ATTR = {"0": "default", "1": "row_sparse", "2": "csr", "default": "default", "row_sparse": "row_sparse",
         "csr": "csr"}


def var_stype(node) -> str:
    """The storage type a variable declares (``Variable(stype=...)``), 'default' when none."""
    attrs = getattr(node, "attrs", None) or {}
    return _ATTR.get(str(attrs.get("__storage_type__", "0")), DEFAULT)


def infer_stypes(g, var_stypes: dict) -> list[str]:
    """The storage type of every forward entry, variables' from ``var_stypes`` (node id -> stype)."""
    stypes = [DEFAULT] * g.num_entries
    for nid, node in enumerate(g.nodes):
        base = g.entry_ptr[nid]
        if node.is_variable:
            stypes[base] = var_stypes.get(nid, DEFAULT)
            continue
        args, _ = g.split_inputs(nid)
        _, outs, _ = node.prop.infer_storage_type([stypes[e] for e in args])
        for k in range(node.num_outputs()):
            stypes[base + k] = outs[k] if k < len(outs) else DEFAULT
    return stypes


def grad_stype(g, stypes: list[str], nid: int) -> str:
    """The storage type of variable ``nid``'s gradient: what its only consumer's sparse backward
    gives it (an ``Embedding(sparse_grad=True)`` weight: row_sparse), else 'default'."""
    eid = g.entry_ptr[nid]
    uses = [(c, k) for c in range(len(g.nodes)) if not g.nodes[c].is_variable
            for k, e in enumerate(g.split_inputs(c)[0]) if e == eid]
    if len(uses) != 1:
        return DEFAULT
    c, k = uses[0]
    prop = g.nodes[c].prop
    fn = getattr(prop, "sparse_backward_infer", None)
    if fn is None:
        return DEFAULT
    args, _ = g.split_inputs(c)
    out_st = [stypes[g.entry_ptr[c] + j] for j in range(g.nodes[c].num_outputs())]
    res = fn(prop, [stypes[e] for e in args], out_st)
    return (res[k] or DEFAULT) if res is not None else DEFAULT


def touches_sparse(ex, op) -> bool:
    st_ = ex._stypes
    return any(st_[e] != DEFAULT for e in list(op.reads) + list(op.writes) if e < len(st_))


def compile_sparse(ex, op, data, step_cls, vars_of):
    """A step running ``op`` (forward, backward, sum or zero) on mixed storage."""
    g, ctx, xp = ex._graph, ex._ctx, ex._xp
    stypes = ex._stypes
    if op.kind == "sum":
        terms, target, req = [data[e] for e in op.reads], data[op.writes[0]], op.req[0]

        def run_sum(rctx):
            if req == NULL:
                return
            total = st.cast_value(xp, value_of(terms[0]), DEFAULT).copy()
            for t in terms[1:]:
                total += st.cast_value(xp, value_of(t), DEFAULT)
            store(xp, target, req, total)

        writes = vars_of(op.writes)
        return step_cls("sum", f"{ex._entries[op.writes[0]].name}:sum", (run_sum, run_sum),
                        [v for v in vars_of(op.reads) if v not in writes], writes)
    if op.kind == "zero":
        target, req = data[op.writes[0]], op.req[0]

        def run_zero(rctx):
            if req not in (NULL, ADD_TO):
                store(xp, target, WRITE_TO, xp.zeros(target.shape, target.dtype))

        return step_cls("zero", f"{ex._entries[op.writes[0]].name}:zero", (run_zero, run_zero), [],
                        vars_of(op.writes))
    node = g.nodes[op.nid]
    prop = node.prop
    args, aux = g.split_inputs(op.nid)
    outs = list(range(g.entry_ptr[op.nid], g.entry_ptr[op.nid + 1]))
    aux_raw = [data[e] for e in aux]
    if op.kind == "forward":
        ent = ex._entries
        plan = plan_for(prop, ctx, [stypes[e] for e in args], [ent[e].shape for e in args],
                        [ent[e].dtype for e in args], out_stypes=[stypes[e] for e in outs])
        in_raw, out_raw = [data[e] for e in args], [data[e] for e in outs]
        res = [ResourceManager.get().request(ctx, r) for r in prop.forward_resource()]
        out_st = [stypes[e] for e in outs]

        def make(is_train):
            def run(rctx):
                vals = execute(plan, xp, OpContext(is_train, rctx, res), [value_of(r) for r in in_raw],
                               [_dense_aux(xp, a) for a in aux_raw], out_st, out_raw)
                for raw, v in zip(out_raw, vals, strict=False):
                    store(xp, raw, WRITE_TO, v)
            return run

        writes = list(dict.fromkeys(vars_of(outs + aux + [args[i] for i in prop.mutate_inputs()])
                                    + [r.var for r in res]))
        return step_cls("forward", node.name, (make(False), make(True)),
                        [v for v in vars_of(args) if v not in writes], writes,
                        outputs=[(node.output_name(k), e) for k, e in enumerate(outs)],
                        inputs=[(g.entry_name(e), e) for e in args])
    # backward
    ent = ex._entries

    def raw_or_zero(e):
        if e is None:
            return None
        return data[e]

    og_raw = [raw_or_zero(e) for e in op.og]
    og_shapes = [ent[outs[k]].shape for k in range(len(op.og))]
    in_raw = [data[e] for e in args]
    out_raw = [data[e] for e in outs]
    in_grad_raw, req = [], []
    for k, x in enumerate(op.in_grad):
        if x is None:
            in_grad_raw.append(np.zeros(ent[args[k]].shape, ent[args[k]].dtype) if xp is np
                               else xp.zeros(ent[args[k]].shape, ent[args[k]].dtype))
            req.append(NULL)
        else:
            in_grad_raw.append(data[x])
            req.append(op.req[op.writes.index(x)])
    res = [ResourceManager.get().request(ctx, r) for r in prop.backward_resource()]
    sparse_bwd = getattr(prop, "sparse_backward", None)
    binfer = getattr(prop, "sparse_backward_infer", None)
    want = binfer(prop, [stypes[e] for e in args], [stypes[e] for e in outs]) if binfer else None
    wanted = [(_stype_of(g_) if r != NULL else None) for g_, r in zip(in_grad_raw, req, strict=True)]
    use_sparse = sparse_bwd is not None and want is not None and all(
        w is None or w == DEFAULT or w == v for w, v in zip(wanted, want, strict=False))

    def run_bwd(rctx):
        op_ctx = OpContext(True, rctx, res)
        ogs = [value_of(r) if r is not None else xp.zeros(s, ent[outs[0]].dtype) for r, s in
               zip(og_raw, og_shapes, strict=True)]
        ins = [value_of(r) for r in in_raw]
        outv = [value_of(r) for r in out_raw]
        if use_sparse:
            grads = sparse_bwd(xp, prop, op_ctx, ogs, ins, outv, wanted)
            for gr, raw, r in zip(grads, in_grad_raw, req, strict=False):
                if r == NULL:
                    continue
                if gr is None:
                    if r != ADD_TO:
                        store(xp, raw, WRITE_TO, xp.zeros(raw.shape, raw.dtype))
                    continue
                store(xp, raw, r, gr)
            return
        dense_backward(prop, ctx, xp, op_ctx, ogs, ins, outv, req, in_grad_raw,
                       [_dense_aux(xp, a) for a in aux_raw])

    writes = list(dict.fromkeys(vars_of(op.writes) + [r.var for r in res]))
    reads = [v for v in vars_of(list(op.reads) + list(aux)) if v not in writes]
    return step_cls("backward", f"{node.name}_backward", (run_bwd, run_bwd), reads, writes)


def _stype_of(raw) -> str:
    return raw.stype if raw.__class__ is SparseStore else DEFAULT


def _dense_aux(xp, raw):
    """Aux states are dense to the kernels (MXNet keeps them dense too)."""
    return raw if raw.__class__ is not SparseStore else st.cast_value(xp, raw.value, DEFAULT)
