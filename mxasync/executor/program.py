"""Turn planned exec ops into engine pushes: one :class:`~mxasync.operator.step.Launch` per op and
training mode, over fixed arrays.

Everything is resolved at bind time (arrays, requests, resources, engine vars), so a forward or
backward call only pushes.  How an op runs (its dense or sparse kernel, the placeholders a
backward gets for what it did not declare it reads, sync or asynchronous) is decided by
:mod:`mxasync.operator.step`, the same for imperative calls and the tape's backward.
"""

from __future__ import annotations

from ..operator.base import WRITE_INPLACE, WRITE_TO
from ..operator.step import BackwardPlan, ForwardPlan, Launch, accumulate

__all__ = ["Step", "compile_ops"]


class Step:
    """One op of the program: ``launches[is_train]`` is pushed; ``outputs`` names what a monitor
    sees; ``op`` and ``op_inputs`` (``<node>_<argument>``) are what an op hook (Gluon's
    ``register_op_hook``) sees."""

    __slots__ = ("name", "launches", "outputs", "inputs", "kind", "op", "op_inputs")

    def __init__(self, kind: str, launches: tuple[Launch, Launch], outputs=(), inputs=(), op: str = "",
                 op_inputs=()):
        self.kind, self.launches, self.name = kind, launches, launches[0].name
        self.outputs, self.inputs = list(outputs), list(inputs)
        self.op, self.op_inputs = op, list(op_inputs)


def compile_ops(ex, ops) -> list[Step]:
    """Steps for ``ops`` of executor ``ex`` (its graph, entries, arrays, plan and context)."""
    return [_compile(ex, op) for op in ops]


def _compile(ex, op) -> Step:
    g, arrays, ctx = ex._graph, ex._arrays, ex._ctx
    if op.kind in ("sum", "zero"):  # the sum of an entry's gradient terms, or a zero gradient
        name = f"{ex._entries[op.writes[0]].name}:{op.kind}"
        launch = accumulate(arrays[op.writes[0]], [arrays[e] for e in op.reads], op.req[0], ctx, name)
        return Step(op.kind, (launch, launch))
    node = g.nodes[op.nid]
    prop = node.prop
    args, aux = g.split_inputs(op.nid)
    outs = list(range(g.entry_ptr[op.nid], g.entry_ptr[op.nid + 1]))
    in_arrays, out_arrays, aux_arrays = [arrays[e] for e in args], [arrays[e] for e in outs], [arrays[e] for e in aux]
    if op.kind == "forward":
        req = [WRITE_INPLACE if e in ex._plan.inplace else WRITE_TO for e in outs]
        launches = tuple(ForwardPlan(prop, ctx, flag, node.name).launch(in_arrays, out_arrays, aux_arrays, req)
                         for flag in (False, True))
        return Step("forward", launches, outputs=[(node.output_name(k), e) for k, e in enumerate(outs)],
                    inputs=[(g.entry_name(e), e) for e in args], op=node.op.name,
                    op_inputs=[(f"{node.name}_{a}", e) for a, e in zip(prop.list_arguments(), args, strict=False)])
    # backward
    ent = ex._entries
    in_grads, req = [], []
    for x in op.in_grad:
        in_grads.append(arrays[x] if x is not None else None)
        r = op.req[op.writes.index(x)] if x is not None else WRITE_TO
        req.append(WRITE_INPLACE if x is not None and x in ex._plan.inplace and r == WRITE_TO else r)
    plan = BackwardPlan(prop, ctx, True, len(args), len(outs), f"{node.name}_backward")  # one per bound node
    launch = plan.launch([arrays[e] if e is not None else None for e in op.og], in_arrays, out_arrays,
                         aux_arrays, in_grads, req)
    # what a monitor sees, under MXNet's names: the entry of each input gradient, or its (shape, dtype)
    # when no gradient is kept (MXNet shows its scratch buffer there)
    many = len(op.in_grad) > 1
    seen = [(f"{node.name}_backward_output{k if many else ''}",
             x if x is not None else (ent[args[k]].shape, ent[args[k]].dtype)) for k, x in enumerate(op.in_grad)]
    return Step("backward", (launch, launch), outputs=seen, op=f"_backward_{node.op.name}")
