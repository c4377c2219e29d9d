"""The gradient pass: the backward ops of a graph, in execution order (bound graphs and the tape).

Walk op nodes in reverse topological order.  A node gets a backward op when
one of its inputs needs a gradient and it has a gradient to propagate: an
incoming one, or none needed (a loss head, whose backward does not read
``out_grad``).  Several gradient terms of one entry are summed by a ``sum``
op; an entry with no term has a zero gradient, which prunes the backward ops
that would only propagate zeros (BlockGrad, ``test_zero_prop``; an op declares ``zero_gradient``).  Which
forward entries a backward op reads comes from the op's
``declare_backward_dependency``; the memory planner keeps exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base import MXAsyncError
from ..operator import OpReqType
from ..operator.step import backward_deps

__all__ = ["ExecOp", "EntryInfo", "build_backward"]


@dataclass
class EntryInfo:
    """One array of the executor: a forward entry, a gradient, a head gradient or an argument gradient."""

    shape: tuple
    dtype: object
    name: str
    external: bool = False  # arguments, aux states, argument and head gradients: not planned


@dataclass
class ExecOp:
    """One engine push: ``forward``/``backward`` of node ``nid``, a ``sum`` of terms, or a ``zero`` fill."""

    kind: str
    nid: int | None
    reads: list[int] = field(default_factory=list)   # entries read (planning and dependencies)
    writes: list[int] = field(default_factory=list)  # entries written
    req: list = field(default_factory=list)          # per write
    inplace: list[tuple[int, int]] = field(default_factory=list)  # (read, write) pairs the op allows
    # backward only: per output the out_grad entry (None: zero), per arg input the in_grad entry
    # (None: not wanted), and which forward entries it reads
    og: list = field(default_factory=list)
    in_grad: list = field(default_factory=list)
    deps: set = field(default_factory=set)


def build_backward(g, entries: list[EntryInfo], grad_req: dict[int, OpReqType], redirect: bool = True):
    """Append gradient entries to ``entries``; return ``(ops, head_grads, arg_grads)``.

    ``grad_req`` maps argument node ids to their request; ``head_grads`` has per
    head the entry of its gradient (None when no gradient flows); ``arg_grads``
    maps argument node ids to their gradient entry.  With ``redirect`` (a bound graph, whose
    memory is planned) the op making an argument's only gradient term writes the argument's
    gradient entry directly, and ops list the in-place pairs the planner may use; the tape
    runs without (its terms go to ``backward()``, which stores them by each ``grad_req``).
    """
    needs = [False] * g.num_entries
    for nid, req in grad_req.items():
        if req != OpReqType.NULL:
            needs[g.entry_ptr[nid]] = True
    for nid, node in enumerate(g.nodes):
        if node.is_variable or node.prop.zero_gradient:
            continue
        args, _ = g.split_inputs(nid)
        if any(needs[e] for e in args):
            for e in range(g.entry_ptr[nid], g.entry_ptr[nid + 1]):
                needs[e] = True

    def new_entry(like: int, name: str, external: bool = False) -> int:
        entries.append(EntryInfo(entries[like].shape, entries[like].dtype, name, external))
        return len(entries) - 1

    terms: dict[int, list[int]] = {}
    head_grads: list = []
    for h in g.heads:
        if needs[h] and h not in terms:
            hg = new_entry(h, f"{entries[h].name}_head_grad", external=True)
            terms[h] = [hg]
            head_grads.append(hg)
        else:
            head_grads.append(terms[h][0] if h in terms and needs[h] else None)
    ops: list[ExecOp] = []

    def gradient_of(e: int) -> int | None:
        ts = terms.get(e, [])
        if len(ts) <= 1:
            return ts[0] if ts else None
        s = new_entry(e, f"{entries[e].name}_grad_sum")
        ops.append(ExecOp("sum", None, reads=list(ts), writes=[s], req=[OpReqType.WRITE_TO]))
        return s

    for nid in reversed(range(len(g.nodes))):
        node = g.nodes[nid]
        if node.is_variable or node.prop.zero_gradient:
            continue
        args, _ = g.split_inputs(nid)
        if not any(needs[e] for e in args):
            continue
        prop = node.prop
        outs = list(range(g.entry_ptr[nid], g.entry_ptr[nid + 1]))
        og = [gradient_of(e) for e in outs]
        if prop.non_differentiable and any(o is not None for o in og):
            # a gradient would have to flow through it: MXNet refuses to bind such a graph
            raise MXAsyncError(f"{prop.label}: the op is non-differentiable (it has no gradient); wrap its output "
                               "in stop_gradient or bind with grad_req='null' for its inputs")
        deps = backward_deps(prop, len(args), len(outs))
        wants_og = any(d[0] == "og" for d in deps)
        if wants_og and all(o is None for o in og):
            continue  # only zeros would flow back
        for k, o in enumerate(og):
            if o is None and ("og", k) in deps:
                z = og[k] = new_entry(outs[k], f"{entries[outs[k]].name}_zero_grad")
                ops.append(ExecOp("zero", None, writes=[z], req=[OpReqType.WRITE_TO]))
        in_grad: list = []
        names = prop.list_arguments()
        for k, e in enumerate(args):
            if needs[e]:
                gi = new_entry(e, f"{node.name}_backward_{names[k]}")
                terms.setdefault(e, []).append(gi)
                in_grad.append(gi)
            else:
                in_grad.append(None)
        reads = [og[k] for k in range(len(outs)) if ("og", k) in deps and og[k] is not None]
        reads += [args[k] for k in range(len(args)) if ("in", k) in deps]
        reads += [outs[k] for k in range(len(outs)) if ("out", k) in deps]
        inplace = _inplace(prop, og, args, outs, in_grad, deps) if redirect else []
        writes = [x for x in in_grad if x is not None]
        ops.append(ExecOp("backward", nid, reads=reads, writes=writes, req=[OpReqType.WRITE_TO] * len(writes),
                          inplace=inplace, og=og, in_grad=in_grad, deps=deps))

    arg_grads: dict[int, int] = {}
    producer = {w: op for op in ops for w in op.writes}  # one map, not a scan of every op per argument
    for nid, req in grad_req.items():
        if req == OpReqType.NULL:
            continue
        e = g.entry_ptr[nid]
        target = new_entry(e, f"{g.nodes[nid].name}_grad", external=True)
        arg_grads[nid] = target
        ts = terms.get(e, [])
        if not ts:
            if req != OpReqType.ADD_TO:
                ops.append(ExecOp("zero", None, writes=[target], req=[req]))
        elif len(ts) > 1 or not redirect or not _redirect(producer.get(ts[0]), ts[0], target, req):
            ops.append(ExecOp("sum", None, reads=list(ts), writes=[target], req=[req]))
    return ops, head_grads, arg_grads


def _inplace(prop, og: list, args: list, outs: list, in_grad: list, deps) -> list[tuple[int, int]]:
    """The (read, write) entry pairs the op's backward may share (for the memory planner)."""
    token = {("og", k): og[k] for k in range(len(outs))}
    token.update({("in", k): args[k] for k in range(len(args))})
    token.update({("out", k): outs[k] for k in range(len(outs))})
    token.update({("grad", k): in_grad[k] for k in range(len(args))})
    pairs = prop.backward_inplace_option([("og", k) for k in range(len(outs))],
                                         [("in", k) for k in range(len(args))],
                                         [("out", k) for k in range(len(outs))],
                                         [("grad", k) for k in range(len(args))])
    return [(token[a], token[b]) for a, b in pairs
            if token.get(a) is not None and token.get(b) is not None and a in deps]


def _redirect(op: ExecOp | None, old: int, new: int, req) -> bool:
    """Make ``op``, which produces gradient term ``old``, write the argument's gradient ``new`` directly."""
    if op is None:
        return False  # a head gradient used as is: the caller copies it
    i = op.writes.index(old)
    op.writes[i], op.req[i] = new, req
    op.in_grad = [new if x == old else x for x in op.in_grad]
    op.inplace = [(a, b) for a, b in op.inplace if b != old]
    return True
