"""The backward pass: push each recorded node's backward to the engine, newest first.

From the heads, collect the nodes of their graph and walk them in reverse
recording order.  A node whose outputs received a gradient gets one engine
push running ``prop.backward_fn(ctx)``, reading only the arrays its
``declare_backward_dependency`` names (NaN placeholders for the rest, as the
executor does) and writing fresh gradient arrays for the inputs that lead to
a wanted variable.  Several terms of one array are summed by a push; at the
variables, ``grad_req`` decides (write overwrites, add accumulates, null
skips).  Nothing here waits: ``x.grad.asnumpy()`` does.

>>> import mxasync as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy().tolist()
[2.0, 4.0, 6.0]
"""

from __future__ import annotations

from contextlib import nullcontext

from ..base import MXAsyncError
from ..ndarray import _recording as state
from ..ndarray._sparse_array import new_sparse
from ..ndarray.ndarray import NDArray, _empty, ones, zeros
from ..operator import OpReqType
from ..operator.base import ADD_TO, NULL, WRITE_TO
from ..operator.sparse.formats import DEFAULT, RSP, SparseStore
from ..operator.step import BackwardPlan, accumulate, launch_inline
from .gradient import build_backward
from .higher_order import ND, LinearBackward, NonDifferentiable, rule_for
from .tape import Entry, Node
from .tape_graph import TapeGraph

__all__ = ["backward", "grad"]


def _sum(terms: list, like: NDArray) -> NDArray:
    """One array holding the sum of ``terms`` (the term itself when there is one); row_sparse when
    every term is, else dense."""
    if len(terms) == 1:
        return terms[0]
    if all(t.stype == RSP for t in terms):
        out = new_sparse(RSP, like.shape, like.dtype, like.context)
    else:
        out = _empty(like.shape, like.dtype, like.context, op_output=True)
    ctx = like.context
    accumulate(out, terms, WRITE_TO, ctx, "_grad_sum", launch_inline(ctx, out.size)).push(ctx)
    return out


def _store(target: NDArray, terms: list, req) -> None:
    """``target = sum(terms)`` (write) or ``target += sum(terms)`` (add), as one push.

    A term that is ``target`` itself was written in place by a graph node (a hybridized
    block's executor bound to the gradient buffer): it goes first, and alone needs no push.
    """
    if any(t is target for t in terms):
        terms = [target] + [t for t in terms if t is not target]
        if len(terms) == 1 and req != ADD_TO:
            return
    ctx = target.context
    accumulate(target, terms, req, ctx, "_grad_store", launch_inline(ctx, target.size)).push(ctx)


def _as_list(x, what):
    if x is None:
        return None
    if isinstance(x, NDArray):
        return [x]
    x = list(x)
    for a in x:
        if a is not None and not isinstance(a, NDArray):
            raise MXAsyncError(f"autograd: {what} must be NDArrays, got {type(a).__name__}")
    return x


def _graph(heads: list) -> list:
    """The nodes reachable from ``heads``, oldest first."""
    seen, stack = {}, []
    for h in heads:
        e = h._ag
        if e is None:
            raise MXAsyncError("autograd: cannot differentiate an array that is not in a computational graph; "
                               "call attach_grad() on the inputs and compute the head inside autograd.record()")
        if e.node is not None:
            stack.append(e.node)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        if node.freed:
            raise MXAsyncError(f"autograd: the graph through {node.prop.label} was freed by a previous "
                               "backward; pass retain_graph=True to the first backward to differentiate "
                               "the same graph twice")
        seen[id(node)] = node
        stack.extend(e.node for e in node.in_ag if e is not None and e.node is not None)
    return sorted(seen.values(), key=lambda n: n.seq)


def _run(heads, head_grads, wanted, train_mode: bool, retain_graph: bool, create_graph: bool = False,
         buffer_of=None) -> dict:
    """Push the backward of the graph of ``heads``; returns ``{id(entry): (entry, terms)}`` for
    the variables that received gradient terms.

    ``buffer_of(entry)``: the array a variable's gradient may be written into directly (its ``.grad``
    under ``grad_req='write'``), or None.  A variable whose gradient is one op's output then gets it
    there, with no copy afterwards (MXNet's backward writes the gradient buffers themselves).

    The tape becomes a graph (tape_graph.py) and the executor's gradient pass
    (:func:`~mxasync.autograd.gradient.build_backward`) says which backward ops run, in which
    order, and which gradient terms are summed; each op then runs once, here, on the arrays
    the earlier ones made.  ``wanted(entry)`` says whether a gradient is wanted at a variable.
    With ``create_graph`` (called while recording) the gradients are computed by recorded op
    calls where the op has a recorded rule (see higher_order.py), so they can be differentiated again.
    """
    heads = _as_list(heads, "heads")
    head_grads = _as_list(head_grads, "head_grads")
    if head_grads is not None and len(head_grads) != len(heads):
        raise MXAsyncError(f"autograd: {len(heads)} heads but {len(head_grads)} head_grads")
    nodes = _graph(heads)
    tg = TapeGraph(nodes, heads)
    grad_req = {nid: WRITE_TO for nid, e in tg.variables.items() if wanted(e)}
    ops, head_entries, arg_grads, n_entries = _gradient_pass(tg, grad_req)
    arrays = tg.arrays + [None] * (n_entries - len(tg.arrays))
    for k, (h, he) in enumerate(zip(heads, head_entries, strict=True)):
        g = head_grads[k] if head_grads is not None else None
        if g is not None and g.shape != h.shape:
            raise MXAsyncError(f"autograd: head_grads[{k}] has shape {g.shape} but the head has shape {h.shape}")
        if he is not None and arrays[he] is None:
            arrays[he] = g if g is not None else ones(h.shape, h.context, h.dtype)
    final = {e: nid for nid, e in arg_grads.items()}
    direct = _direct_buffers(ops, final, tg, buffer_of) if buffer_of is not None else {}
    grads: dict = {}  # id(entry) -> (entry, [terms])
    for op in ops:
        if op.writes and op.writes[0] in final:  # a variable's gradient: its terms go to backward() or grad()
            terms = [arrays[e] for e in op.reads if arrays[e] is not None]
            if terms:
                entry = tg.variables[final[op.writes[0]]]
                grads[id(entry)] = (entry, terms)
        elif op.kind == "sum":
            terms = [arrays[e] for e in op.reads if arrays[e] is not None]
            arrays[op.writes[0]] = None if not terms else _sum_recorded(terms) if create_graph \
                else _sum(terms, terms[0])
        elif op.kind == "backward":
            node = tg.tape_nodes[op.nid]
            ogs = [arrays[e] if e is not None else None for e in op.og]
            if all(g is None for g in ogs) and node.prop.tape_backward is not None:
                continue  # no gradient reached a stand-in (its zero output gradients were not made)
            got = _node_backward(node, ogs, [e is not None for e in op.in_grad], train_mode, create_graph,
                                 [direct.get(e) for e in op.in_grad] if direct else None)
            for e, g in zip(op.in_grad, got, strict=True):
                if e is not None:
                    arrays[e] = g
        # "zero": an output gradient nobody sent stays None; the op reading it makes its own zeros
    if not retain_graph:
        for node in nodes:
            node.free()
        tape = state._tls.tape
        if tape:
            tape[:] = [n for n in tape if not n.freed]
    return grads


def _direct_buffers(ops: list, final: dict, tg: TapeGraph, buffer_of) -> dict:
    """``{gradient entry: buffer}`` for the variables whose gradient is a single term written by one op."""
    direct = {}
    for op in ops:
        if op.writes and op.writes[0] in final and len(op.reads) == 1:
            buf = buffer_of(tg.variables[final[op.writes[0]]])
            if buf is not None:
                direct[op.reads[0]] = buf
    return direct


_PASSES: dict = {}  # the gradient pass's result per tape structure and wanted variables
_PASSES_MAX = 256


def _gradient_pass(tg: TapeGraph, grad_req: dict) -> tuple:
    """``build_backward`` on ``tg``: ``(ops, head entries, arg gradient entries, entry count)``,
    reused for a tape of the same structure (nothing in the result refers to the arrays)."""
    key = (tg.structure, tuple(grad_req))
    hit = _PASSES.get(key)
    if hit is None:
        entries = tg.entries()
        ops, head_entries, arg_grads = build_backward(tg, entries, grad_req, redirect=False)
        if len(_PASSES) >= _PASSES_MAX:
            _PASSES.clear()
        hit = _PASSES[key] = (ops, head_entries, arg_grads, len(entries))
    return hit


def _sum_recorded(terms: list) -> NDArray:
    """The sum of gradient terms as recorded additions (create_graph)."""
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def _link(node, ogs: list, pairs: list) -> None:
    """Put gradients computed by kernels into the graph (create_graph through an op without a
    recorded rule).  The input gradient of a linear op (``linear_input``) is linked to the output
    gradient by a node whose own gradient is the op; any other gradient by a node that refuses
    to be differentiated, as MXNet's ``_backward_<op>`` nodes without FGradient do."""
    args, outs = node.inputs, node.outputs
    linear = node.prop.tape_backward is None and node.prop.linear_input and len(outs) == 1
    rest = []
    for k, g in pairs:
        if g._ag is not None:
            continue
        if linear and k == 0:
            if ogs[0]._ag is not None:
                _add_node(LinearBackward(node), node, [ogs[0]], [g])
        else:
            rest.append(g)
    sources = ogs + list(args) + list(outs)
    if rest and any(a._ag is not None for a in sources):
        _add_node(NonDifferentiable(node.prop.op_name), node, sources, rest)


def _add_node(prop, node, sources: list, outputs: list) -> None:
    link = Node(prop, node.ctx, sources, [a._ag for a in sources], [], outputs, node.is_train)
    for k, g in enumerate(outputs):
        g._ag = Entry(link, k)
    state.current_tape().append(link)


def _node_backward(node, ogs: list, want: list, train_mode: bool, create_graph: bool = False,
                   buffers: list | None = None) -> list:
    """The input gradients of a recorded node (None where not wanted) from its output gradients
    ``ogs`` (None: no gradient reached that output), pushed through the step builder; a dense one
    goes into ``buffers[k]`` when given (a variable's gradient buffer the op itself does not read)."""
    prop, ctx = node.prop, node.ctx
    outs, args = node.outputs, node.inputs
    own = prop.tape_backward  # a TapeOp that is not one op's kernels (tape.py)
    if own is not None and (prop.tape_backward_recorded or not create_graph):
        return list(own(node, ogs, want, train_mode))
    if create_graph:
        return _backward_recorded(node, ogs, want, train_mode)
    sparse = _involves_sparse(node, ogs)
    plan = BackwardPlan.of(prop, ctx, train_mode, len(args), len(outs))
    # the zero output gradients made here must outlive the push that reads them: a pooled chunk
    # dropped with its ops pending is parked, and the in_grad allocated below could take its
    # block over, deleting the var this push reads (and reusing the memory it reads)
    ogs = [zeros(o.shape, o.context, o.dtype) if g is None and not sparse and ("og", k) in plan.deps else g
           for k, (g, o) in enumerate(zip(ogs, outs, strict=True))]
    stypes = _grad_stypes(prop, node) if sparse else None
    in_grads = []
    for k, (x, w) in enumerate(zip(args, want, strict=True)):
        if not w:
            in_grads.append(None)
        elif stypes is None or stypes[k] == DEFAULT:
            buf = buffers[k] if buffers is not None else None
            usable = buf is not None and stypes is None and _fits(buf, x, node, ogs)
            in_grads.append(buf if usable else _empty(x.shape, x.dtype, x.context, op_output=True))
        else:
            in_grads.append(new_sparse(stypes[k], x.shape, x.dtype, x.context))
    size = max((x.size for x in args), default=0)
    plan.launch(ogs, args, outs, node.aux, in_grads, [WRITE_TO] * len(args),
                inline=launch_inline(ctx, size)).push(ctx)
    del ogs  # pushed: from now on a dropped chunk waits for this op
    return in_grads


def _fits(buf: NDArray, x: NDArray, node, ogs: list) -> bool:
    """Whether ``buf`` can take the gradient of input ``x`` of ``node``: dense, of ``x``'s shape, dtype and
    context, and none of the arrays the backward reads (it would then write what it reads)."""
    if buf.shape != x.shape or buf.dtype != x.dtype or buf.context != x.context or _is_sparse(buf):
        return False
    var = buf._chunk.var
    return all(a is None or a._chunk.var is not var for group in (node.inputs, node.outputs, ogs) for a in group)


def _is_sparse(x) -> bool:
    return x is not None and x._data.__class__ is SparseStore


def _involves_sparse(node, ogs) -> bool:
    """csr / row_sparse arrays in or out of ``node``, among its output gradients, or as a variable's gradient buffer."""
    if any(_is_sparse(x) for x in node.inputs) or any(_is_sparse(o) for o in node.outputs):
        return True
    if any(_is_sparse(g) for g in ogs):
        return True
    return any(e is not None and e.node is None and _is_sparse(e.grad) for e in node.in_ag)


def _grad_stypes(prop, node) -> list:
    """Per input, the storage type of its gradient term: what the op's sparse backward offers when
    the variable's gradient buffer has that type (``Embedding(sparse_grad=True)``: row_sparse), else dense."""
    offered = None
    if prop.sparse_backward is not None and prop.sparse_backward_infer is not None:
        offered = prop.sparse_backward_infer(prop, [x.stype for x in node.inputs], [o.stype for o in node.outputs])
    out = []
    for k, e in enumerate(node.in_ag):
        target = e.grad if e is not None and e.node is None else None
        ok = offered is not None and offered[k] not in (None, DEFAULT) and target is not None \
            and target.stype == offered[k]
        out.append(offered[k] if ok else DEFAULT)
    return out


def _backward_recorded(node, ogs: list, want: list, train_mode: bool) -> list:
    """create_graph: the node's backward as recorded op calls when its op has a rule, else its
    kernel backward linked to the graph by a node that refuses a further derivative."""
    prop, outs, args = node.prop, node.outputs, node.inputs
    rule = None if prop.tape_backward is not None else rule_for(prop)
    ogs = [g if g is not None else zeros(o.shape, o.context, o.dtype) for g, o in zip(ogs, outs, strict=True)]
    res = rule(ND, prop, ogs, list(args), list(outs)) if rule is not None else None
    if res is None:  # the kernels compute the gradient; it joins the graph without a derivative of its own
        got = _node_backward(node, ogs, want, train_mode)
        _link(node, ogs, [(k, g) for k, g in enumerate(got) if g is not None])
        return got
    out = []
    for x, w, g in zip(args, want, res, strict=True):
        if g is not None and w and g.shape != x.shape:
            raise MXAsyncError(f"autograd: the recorded gradient of {prop.label} has shape {g.shape} for an "
                               f"input of shape {x.shape}")
        out.append(g if w else None)
    return out


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True) -> None:  # noqa: FBT001, FBT002
    """Compute the gradients of ``heads`` into the ``.grad`` of the variables they depend on.

    ``head_grads`` default to ones.  ``grad_req`` of each variable: 'write'
    overwrites its gradient, 'add' accumulates, 'null' leaves it alone.
    Without ``retain_graph`` the graph is freed (a second backward raises).
    """
    grads = _run(heads, head_grads, lambda e: e.node is None and e.req != NULL, train_mode, retain_graph,
                 buffer_of=lambda e: e.grad if e.req == WRITE_TO and e.grad is not None else None)
    for e, terms in grads.values():
        if e.node is None and e.req != NULL and e.grad is not None:
            _store(e.grad, terms, e.req)
            e.fresh = True


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph: bool = False,  # noqa: FBT001, FBT002
         train_mode: bool = True) -> list:  # noqa: FBT001, FBT002
    """The gradients of ``heads`` with respect to ``variables``, as new arrays; ``.grad`` is not touched.

    With ``create_graph=True`` the gradient computation is recorded, so the results can be
    differentiated again (``retain_graph`` then defaults to True, as in MXNet).
    """
    single = isinstance(variables, NDArray)
    variables = _as_list(variables, "variables")
    for k, v in enumerate(variables):
        if v._ag is None:
            raise MXAsyncError(f"autograd.grad: variables[{k}] is not in a computational graph "
                               "(call attach_grad() on it before recording)")
    if retain_graph is None:
        retain_graph = create_graph
    ids = {id(v._ag) for v in variables}
    out = []
    with state._scope(True, train_mode) if create_graph else nullcontext():
        grads = _run(heads, head_grads, lambda e: id(e) in ids, train_mode, bool(retain_graph), create_graph)
        for v in variables:
            entry = grads.get(id(v._ag))
            if entry is None:
                out.append(zeros(v.shape, v.context, v.dtype))
                continue
            if create_graph:
                total = _sum_recorded(entry[1])
                if total._ag is not None and all(total is not o for o in out):
                    out.append(total)  # in the graph: differentiable again
                    continue
            target = _empty(v.shape, v.dtype, v.context, op_output=True)
            _store(target, entry[1], OpReqType.WRITE_TO)
            out.append(target)
    return out[0] if single else out
