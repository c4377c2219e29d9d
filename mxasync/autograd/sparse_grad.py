"""Autograd with sparse arrays: nodes whose inputs, outputs or gradients are csr / row_sparse.

A variable ``attach_grad(stype='row_sparse')``ed gets a row_sparse gradient buffer.  A node
that reads a sparse array runs its op's sparse backward when the op has one for these storage
types and the variable's buffer is sparse (``dot`` with a csr lhs, embeddings, ``retain``,
``_square_sum``): the gradient term is then row_sparse and never dense.  Otherwise the dense
backward runs on dense copies of the sparse arrays (:func:`~mxasync.operator.sparse.dispatch.dense_backward`).
Sums of terms and the final store keep the target's storage type.
"""

from __future__ import annotations

from ..ndarray._sparse_array import new_sparse
from ..ndarray.ndarray import NDArray, _empty
from ..operator import OpContext
from ..operator.base import ADD_TO, NULL, WRITE_TO
from ..operator.sparse import storage as st
from ..operator.sparse.dispatch import add_values, dense_backward, store, value_of
from ..operator.sparse.storage import DEFAULT, SparseStore
from ..runtime.engine import Engine
from ..runtime.resource import ResourceManager

__all__ = ["involves_sparse", "backward_node", "sum_terms", "store_terms"]


def _is_sparse(x) -> bool:
    return x is not None and x._data.__class__ is SparseStore


def involves_sparse(node, terms) -> bool:
    if any(_is_sparse(x) for x in node.inputs) or any(_is_sparse(o) for o in node.outputs):
        return True
    if any(t is not None and any(_is_sparse(g) for g in t[1]) for t in terms):
        return True
    return any(e is not None and e.node is None and _is_sparse(e.grad) for e in node.in_ag)


def _xp(ctx):
    from ..backends import get_backend

    return get_backend(ctx.device_type).xp


def backward_node(node, terms, add_term, wanted, needs, train_mode, summed) -> None:
    """``_backward_node`` for a node involving sparse arrays (``summed(terms, like)`` sums one output's terms)."""
    prop, ctx = node.prop, node.ctx
    outs, args = node.outputs, node.inputs
    xp = _xp(ctx)
    ogs = [summed(t[1], o) if t is not None else None for t, o in zip(terms, outs, strict=True)]
    want = [e is not None and (wanted(e) or (e.node is not None and needs.get(id(e.node), False)))
            for e in node.in_ag]
    binfer = getattr(prop, "sparse_backward_infer", None)
    kernel = getattr(prop, "sparse_backward", None)
    sparse_st = binfer(prop, [x.stype for x in args], [o.stype for o in outs]) if binfer and kernel else None
    grads = []
    for k, (x, e) in enumerate(zip(args, node.in_ag, strict=True)):
        if not want[k]:
            grads.append(None)
            continue
        target = e.grad if e.node is None and e.grad is not None else None
        stype = DEFAULT
        if sparse_st is not None and sparse_st[k] not in (None, DEFAULT) and target is not None \
                and target.stype == sparse_st[k]:
            stype = sparse_st[k]
        g = _empty(x.shape, x.dtype, x.context, op_output=True) if stype == DEFAULT else \
            new_sparse(stype, x.shape, x.dtype, x.context)
        grads.append(g)
    use_kernel = sparse_st is not None and any(g is not None and g.stype != DEFAULT for g in grads)
    og_raw = [g._data if g is not None else None for g in ogs]
    in_raw = [x._data for x in args]
    out_raw = [o._data for o in outs]
    aux_raw = [a._data for a in node.aux]
    g_raw = [g._data if g is not None else None for g in grads]
    res = [ResourceManager.get().request(ctx, r) for r in prop.backward_resource()]
    shapes = [(o.shape, o._data.dtype) for o in outs]

    def run(rctx):
        op_ctx = OpContext(train_mode, rctx, res)
        og_v = [value_of(r) if r is not None else xp.zeros(s, d) for r, (s, d) in zip(og_raw, shapes, strict=True)]
        in_v = [value_of(r) for r in in_raw]
        out_v = [value_of(r) for r in out_raw]
        if use_kernel:
            wanted_st = [(r.stype if r.__class__ is SparseStore else DEFAULT) if r is not None else None
                         for r in g_raw]
            got = kernel(xp, prop, op_ctx, og_v, in_v, out_v, wanted_st)
            for r, v in zip(g_raw, got, strict=False):
                if r is not None:
                    store(xp, r, WRITE_TO, v if v is not None else xp.zeros(r.shape, r.dtype))
            return
        targets = [r if r is not None else xp.zeros(x.shape, x._data.dtype) for r, x in zip(g_raw, args, strict=True)]
        req = [WRITE_TO if r is not None else NULL for r in g_raw]
        dense_backward(prop, ctx, xp, op_ctx, og_v, in_v, out_v, req, targets,
                       [value_of(a) if a.__class__ is not SparseStore else st.cast_value(xp, a.value, DEFAULT)
                        for a in aux_raw])

    reads = [g._chunk.var for g in ogs if g is not None] + [x._chunk.var for x in args] + \
        [o._chunk.var for o in outs] + [a._chunk.var for a in node.aux]
    writes = [g._chunk.var for g in grads if g is not None] + [r.var for r in res]
    writes = list(dict.fromkeys(writes))
    reads = [v for v in dict.fromkeys(reads) if v not in writes]
    Engine.get().push_sync(run, ctx, reads, writes, name=f"{prop.op_name}_backward")
    for g, e in zip(grads, node.in_ag, strict=True):
        if g is not None:
            add_term(e, g)


def sum_terms(terms: list, like: NDArray) -> NDArray:
    """The sum of gradient terms some of which are sparse: row_sparse when all are, else dense."""
    stype = st.RSP if all(t.stype == st.RSP for t in terms) else DEFAULT
    out = _empty(like.shape, like.dtype, like.context, op_output=True) if stype == DEFAULT else \
        new_sparse(stype, like.shape, like.dtype, like.context)
    store_terms(out, terms, WRITE_TO)
    return out


def store_terms(target: NDArray, terms: list, req) -> None:
    """``target (+)= sum(terms)`` in the target's storage type."""
    xp = _xp(target.context)
    dst, srcs = target._data, [t._data for t in terms if t is not target]
    keep = any(t is target for t in terms)
    add = req == ADD_TO or keep

    def run(rctx):
        if not srcs:
            if not add:
                store(xp, dst, WRITE_TO, xp.zeros(dst.shape, dst.dtype))
            return
        total = value_of(srcs[0])
        for s in srcs[1:]:
            total = add_values(xp, st.cast_value(xp, total, DEFAULT) if not isinstance(total, st.SparseValue)
                               else total, value_of(s))
        store(xp, dst, ADD_TO if add else WRITE_TO, total)

    writes = [target._chunk.var]
    reads = [v for v in dict.fromkeys(t._chunk.var for t in terms) if v not in writes]
    Engine.get().push_sync(run, target.context, reads, writes, name="_grad_store")
