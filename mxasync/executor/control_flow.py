"""Running the control-flow ops (``_foreach``, ``_while_loop``, ``_cond``; declared in
``mxasync/operator/contrib/control_flow.py``) on NDArrays.

Each subgraph runs as a :class:`CachedGraph`, on a custom-op thread as ``Custom`` does, so a
loop may read its condition. Backward runs the loop again under autograd and
backpropagates the head gradients through it (a body with dropout draws new masks there).

>>> import mxasync as mx
>>> i, s = mx.sym.var('i'), mx.sym.var('s')
>>> _, (i_end, s_end) = mx.sym.contrib.while_loop(lambda i, s: i <= 4, lambda i, s: (None, (i + 1, s + i)),
...                                              [i, s], max_iterations=10)
>>> ex = s_end.bind(mx.cpu(), {'i': mx.nd.array([1]), 's': mx.nd.array([0])})
>>> ex.forward()[0].asnumpy().tolist()
[10.0]
"""

from __future__ import annotations

import numpy as np

from .. import _seams, autograd
from ..ndarray._control_flow import concat, stack
from ..ndarray._creation import zeros
from ..operator import OpReqType
from ..operator.base import Operator
from ..operator.custom import _run
from .cached_graph import CachedGraph

__all__: list = []


def _graph(prop, field):
    """The subgraph ``field`` of ``prop`` as a callable over NDArrays (one CachedGraph each)."""
    g = prop.graph(field)
    runner = getattr(g, "runner", None)
    if runner is None:
        cached = CachedGraph(g.sym)
        runner = g.runner = lambda arrays: cached(list(arrays), [True] * len(arrays))
    return runner


def _assign(dst, req, value) -> None:
    req = OpReqType.parse(req)
    if req == OpReqType.NULL:
        return
    if req == OpReqType.ADD_TO:
        dst[:] = dst + value
    else:
        dst[:] = value


def _run_foreach(prop, ins, out_shapes):
    p, body = prop.params, _graph(prop, "body")
    current = list(ins)
    steps = ins[0].shape[0]
    per_step = []
    for t in range(steps):
        res = body([ins[loc][t] if loc < p.num_data else current[loc] for loc in p.body_locs])
        per_step.append(res[:p.num_out_data])
        current[p.num_data:p.num_data + p.num_states] = res[p.num_out_data:]
    stacked = [stack(*col, axis=0) for col in zip(*per_step, strict=True)] if per_step else \
        [zeros(s, ctx=ins[0].context) for s in out_shapes[:p.num_out_data]]
    return stacked + current[p.num_data:p.num_data + p.num_states]

def _run_while_loop(prop, ins, out_shapes):
    p, cond, func = prop.params, _graph(prop, "cond"), _graph(prop, "func")
    current, per_step = list(ins), []
    while len(per_step) < p.max_iterations:
        flag = cond([current[loc] for loc in p.cond_locs])[0]
        if not bool(flag.asnumpy().ravel()[0]):
            break
        res = func([current[loc] for loc in p.func_locs])
        per_step.append(res[:p.num_out_data])
        current[:p.num_vars] = res[p.num_out_data:]
    stacked = []
    for k in range(p.num_out_data):
        rows = [step[k].expand_dims(0) for step in per_step]
        shape, dtype = out_shapes[k], rows[0].dtype if rows else np.float32
        if len(rows) < p.max_iterations:
            rows.append(zeros((p.max_iterations - len(rows),) + tuple(shape[1:]), ctx=ins[0].context, dtype=dtype))
        stacked.append(concat(*rows, dim=0) if len(rows) > 1 else rows[0])
    return stacked + current[:p.num_vars]

def _run_cond(prop, ins, out_shapes):
    p = prop.params
    flag = _graph(prop, "pred")([ins[loc] for loc in p.pred_locs])[0]
    field, locs = ("then_graph", p.then_locs) if bool(flag.asnumpy().ravel()[0]) else ("else_graph", p.else_locs)
    return _graph(prop, field)([ins[loc] for loc in locs])




_RUNS = {"_foreach": _run_foreach, "_while_loop": _run_while_loop, "_cond": _run_cond}


class _ControlFlowOperator(Operator):
    def __init__(self, prop, ctx):
        self.prop, self.ctx = prop, ctx
        self.loop = _RUNS[prop.op_name]

    def forward(self, op_ctx, in_data, req, out_data, aux):
        def call(w):
            outs = w(out_data)
            _forward(outs, w)

        def _forward(outs, w):
            scope = autograd.train_mode() if op_ctx.is_train else autograd.predict_mode()
            with scope:
                results = self.loop(self.prop, w(in_data), [o.shape for o in outs])
            for o, r, v in zip(outs, req, results, strict=True):
                _assign(o, r, v)
            for o in outs:
                o.wait_to_read()

        _run(self.prop.op_name, self.ctx, call, written=(out_data,))

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        def call(w):
            _backward(w)

        def _backward(w):
            xs = [x.copy() for x in w(in_data)]
            diff = [np.issubdtype(x.dtype, np.floating) for x in xs]
            for x, d in zip(xs, diff, strict=True):
                if d:
                    x.attach_grad()
            with autograd.record(train_mode=op_ctx.is_train):
                outs = self.loop(self.prop, xs, [o.shape for o in out_data])
            heads = [(o, g) for o, g in zip(outs, w(out_grad), strict=True)
                     if np.issubdtype(o.dtype, np.floating) and o._ag is not None]
            if heads:
                autograd.backward([h for h, _ in heads], head_grads=[g for _, g in heads])
            for x, d, ig, r in zip(xs, diff, w(in_grad), req, strict=True):
                g = x.grad if d and x.grad is not None else zeros(x.shape, ctx=x.context, dtype=x.dtype)
                _assign(ig, r, g)
                ig.wait_to_read()

        _run(f"_backward{self.prop.op_name}", self.ctx, call, written=(in_grad,))


_seams.control_flow.install(_ControlFlowOperator)
