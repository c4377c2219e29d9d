"""Turn planned exec ops into engine pushes: one closure per op over fixed arrays.

Everything is resolved at bind time (arrays, requests, resources, engine
vars), so a forward or backward call only pushes.  A backward op gets the
forward arrays it declared it needs; the others are zero-stride NaN
placeholders of the right shape, so an op that under-declares its
dependencies shows NaNs in gradient checks instead of silently reading
recycled memory.
"""

from __future__ import annotations

from ..operator import OpContext
from ..operator.base import ADD_TO, NULL, WRITE_INPLACE, WRITE_TO, placeholder
from ..runtime.resource import ResourceManager
from .storage import compile_sparse, touches_sparse

__all__ = ["Step", "compile_ops"]


class Step:
    """One push: ``fns[is_train]`` runs it; ``outputs`` names what a monitor sees; ``op`` and
    ``op_inputs`` (``<node>_<argument>``) are what an op hook (Gluon's ``register_op_hook``) sees."""

    __slots__ = ("name", "fns", "const_vars", "mutate_vars", "outputs", "inputs", "kind", "op", "op_inputs",
                 "asynchronous")

    def __init__(self, kind, name, fns, const_vars, mutate_vars, outputs=(), inputs=(), op="", op_inputs=(),
                 asynchronous=(False, False)):
        self.kind, self.name, self.fns = kind, name, fns
        #: per is_train: ``fns[flag]`` is ``fn(rctx, on_complete)``, pushed with ``push_async``
        self.asynchronous = asynchronous
        self.const_vars, self.mutate_vars = const_vars, mutate_vars
        self.outputs, self.inputs = list(outputs), list(inputs)
        self.op, self.op_inputs = op, list(op_inputs)


def _vars(arrays, eids) -> list:
    return list(dict.fromkeys(arrays[e]._chunk.var for e in eids))


def compile_ops(ex, ops) -> list[Step]:
    """Steps for ``ops`` of executor ``ex`` (its graph, entries, arrays, plan and context)."""
    data = [a._data if a is not None else None for a in ex._arrays]  # once: per op it made bind quadratic
    return [_compile(ex, op, data) for op in ops]


def _compile(ex, op, data) -> Step:
    g, arrays, ctx = ex._graph, ex._arrays, ex._ctx
    if ex._stypes is not None and touches_sparse(ex, op):  # csr / row_sparse arrays: executor/storage.py
        return compile_sparse(ex, op, data, Step, lambda eids: _vars(arrays, eids))
    if op.kind == "sum":
        return _sum_step(ex, op, data)
    if op.kind == "zero":
        target, req = data[op.writes[0]], op.req[0]

        def zero(rctx):
            if req != NULL and req != ADD_TO:
                target[...] = 0

        return Step("zero", f"{ex._entries[op.writes[0]].name}:zero", (zero, zero), [],
                    _vars(arrays, op.writes))
    node = g.nodes[op.nid]
    prop = node.prop
    args, aux = g.split_inputs(op.nid)
    outs = list(range(g.entry_ptr[op.nid], g.entry_ptr[op.nid + 1]))
    aux_data = [data[e] for e in aux]
    if op.kind == "forward":
        fwd = prop.forward_fn(ctx)
        in_data = [data[e] for e in args]
        out_data = [data[e] for e in outs]
        req = [WRITE_INPLACE if e in ex._plan.inplace else WRITE_TO for e in outs]
        res = [ResourceManager.get().request(ctx, r) for r in prop.forward_resource()]
        mutated = [args[i] for i in prop.mutate_inputs()]

        asyn = (prop.asynchronous(False), prop.asynchronous(True))

        def make(is_train):
            if asyn[is_train]:  # done when it calls on_complete (SyncBatchNorm meeting its other devices)
                fwd_async = prop.forward_async_fn(ctx)

                def run_async(rctx, on_complete):
                    fwd_async(OpContext(is_train, rctx, res), in_data, req, out_data, aux_data, on_complete)
                return run_async

            def run(rctx):
                fwd(OpContext(is_train, rctx, res), in_data, req, out_data, aux_data)
            return run

        reads = _vars(arrays, args)
        writes = list(dict.fromkeys(_vars(arrays, outs + aux + mutated) + [r.var for r in res]))
        return Step("forward", node.name, (make(False), make(True)), [v for v in reads if v not in writes],
                    writes, outputs=[(node.output_name(k), e) for k, e in enumerate(outs)],
                    inputs=[(g.entry_name(e), e) for e in args], op=node.op.name,
                    op_inputs=[(f"{node.name}_{a}", e) for a, e in zip(prop.list_arguments(), args, strict=False)],
                    asynchronous=asyn)
    # backward
    xp = ex._xp
    ent = ex._entries
    deps = op.deps

    def pick(tag, k, e):
        return data[e] if (tag, k) in deps and e is not None else placeholder(xp, ent[e].shape, ent[e].dtype)

    bwd = prop.backward_fn(ctx)
    out_grad = [pick("og", k, e if e is not None else outs[k]) for k, e in enumerate(op.og)]
    in_data = [pick("in", k, e) for k, e in enumerate(args)]
    out_data = [pick("out", k, e) for k, e in enumerate(outs)]
    in_grad, req = [], []
    for k, x in enumerate(op.in_grad):
        if x is None:
            in_grad.append(placeholder(xp, ent[args[k]].shape, ent[args[k]].dtype))
            req.append(NULL)
        else:
            in_grad.append(data[x])
            r = op.req[op.writes.index(x)]
            req.append(WRITE_INPLACE if x in ex._plan.inplace and r == WRITE_TO else r)
    res = [ResourceManager.get().request(ctx, r) for r in prop.backward_resource()]

    def run_bwd(rctx):
        bwd(OpContext(True, rctx, res), out_grad, in_data, out_data, req, in_grad, aux_data)

    asyn = prop.asynchronous(True)
    if asyn:  # done when it calls on_complete (SyncBatchNorm meeting its other devices)
        bwd_async = prop.backward_async_fn(ctx)

        def run_bwd(rctx, on_complete):  # noqa: F811 - the asynchronous twin replaces it
            bwd_async(OpContext(True, rctx, res), out_grad, in_data, out_data, req, in_grad, aux_data, on_complete)

    # SyncBatchNorm updates its moving statistics in backward, as MXNet's does
    written_aux = aux if prop.backward_writes_aux else []
    writes = list(dict.fromkeys(_vars(arrays, op.writes + written_aux) + [r.var for r in res]))
    reads = [v for v in _vars(arrays, op.reads + aux) if v not in writes]
    # what a monitor sees, under MXNet's names: the entry of each input gradient, or its (shape, dtype)
    # when no gradient is kept (MXNet shows its scratch buffer there)
    many = len(op.in_grad) > 1
    seen = [(f"{node.name}_backward_output{k if many else ''}",
             x if x is not None else (ent[args[k]].shape, ent[args[k]].dtype)) for k, x in enumerate(op.in_grad)]
    return Step("backward", f"{node.name}_backward", (run_bwd, run_bwd), reads, writes, outputs=seen,
                op=f"_backward_{node.op.name}", asynchronous=(asyn, asyn))


def _sum_step(ex, op, data) -> Step:
    terms = [data[e] for e in op.reads]
    target, req = data[op.writes[0]], op.req[0]

    add = ex._xp.add

    def run(rctx):
        if req == NULL:
            return
        if req == ADD_TO:
            for t in terms:
                add(target, t, out=target)
        elif len(terms) == 1:
            target[...] = terms[0]
        else:
            add(terms[0], terms[1], out=target)
            for t in terms[2:]:
                add(target, t, out=target)

    writes = _vars(ex._arrays, op.writes)
    reads = [v for v in _vars(ex._arrays, op.reads) if v not in writes]
    return Step("sum", f"{ex._entries[op.writes[0]].name}:sum", (run, run), reads, writes)
