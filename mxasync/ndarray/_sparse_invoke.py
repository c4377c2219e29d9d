"""Imperative calls with sparse inputs or outputs: one engine push running the op's sparse
kernel or MXNet's storage fallback (:mod:`mxasync.operator.sparse.dispatch`)."""

from __future__ import annotations

from ..base import MXAsyncError
from ..operator import OpContext
from ..operator.base import WRITE_TO
from ..operator.sparse.dispatch import execute, plan_for, store, value_of
from ..operator.sparse.storage import DEFAULT
from ..runtime.engine import Engine
from ..runtime.resource import ResourceManager
from ._sparse_array import new_sparse
from .ndarray import _empty, _xp

__all__ = ["invoke_sparse"]


def invoke_sparse(opdef, prop, inputs: list, out, is_train: bool, ctx, rec: bool, record_hook):
    n_args = len(inputs) if opdef.key_var_num_args else len(prop.arguments)
    args, aux = (inputs, []) if len(inputs) <= n_args else (inputs[:n_args], inputs[n_args:])
    plan = plan_for(prop, ctx, [x.stype for x in args], [x.shape for x in args], [x.dtype for x in args])
    if any(s is None for s in plan.out_shapes):
        raise MXAsyncError(f"{prop.label}: cannot infer the output shape from inputs {[x.shape for x in args]}")
    if out is None:
        outputs = [_empty(s, t, ctx) if st == DEFAULT else new_sparse(st, s, t, ctx)
                   for s, t, st in zip(plan.out_shapes, plan.out_types, plan.out_stypes, strict=True)]
    else:
        outputs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outputs) != plan.n_out:
            raise MXAsyncError(f"{prop.label}: out= needs {plan.n_out} arrays, got {len(outputs)}")
        for o, s in zip(outputs, plan.out_shapes, strict=True):
            if tuple(o.shape) != tuple(s):
                raise MXAsyncError(f"{prop.label}: out= has shape {o.shape} but the result has shape {tuple(s)}")
    out_stypes = [o.stype for o in outputs]
    resources = [ResourceManager.get().request(ctx, r) for r in prop.resources(is_train)]
    in_raw = [x._data for x in args]
    aux_raw = [x._data for x in aux]
    out_raw = [o._data for o in outputs]
    xp = _xp(ctx)

    def run(rctx):
        vals = [value_of(r) for r in in_raw]
        res = execute(plan, xp, OpContext(is_train, rctx, resources), vals, aux_raw, out_stypes, out_raw)
        for raw, v in zip(out_raw, res, strict=False):
            store(xp, raw, WRITE_TO, v)

    writes = list(dict.fromkeys([o._chunk.var for o in outputs] + [x._chunk.var for x in aux]
                                + [args[i]._chunk.var for i in prop.mutate_inputs()] + [r.var for r in resources]))
    reads = [v for v in dict.fromkeys(x._chunk.var for x in args) if v not in writes]
    Engine.get().push_sync(run, ctx, reads, writes, name=prop.op_name)
    if rec:
        record_hook.record_op(prop, ctx, args, aux, outputs, is_train)
    if out is not None:
        return out
    visible = prop.num_visible_outputs()
    return outputs[0] if visible == 1 else outputs[:visible]
