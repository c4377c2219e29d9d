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
    pass_ = _GradientPass(g, entries, _needs(g, grad_req), redirect)
    head_grads = pass_.seed_heads()
    for nid in reversed(range(len(g.nodes))):
        pass_.node(nid)
    return pass_.ops, head_grads, pass_.arg_grads(grad_req)


def _needs(g, grad_req: dict) -> list[bool]:
    """Per entry: whether a wanted argument's gradient flows through it."""
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
    return needs


class _GradientPass:
    """The state of one :func:`build_backward`: the gradient terms of each entry and the ops so far."""

    def __init__(self, g, entries: list[EntryInfo], needs: list[bool], redirect: bool):
        self.g, self.entries, self.needs, self.redirect = g, entries, needs, redirect
        self.terms: dict[int, list[int]] = {}
        self.ops: list[ExecOp] = []

    def new_entry(self, like: int, name: str, external: bool = False) -> int:
        entries = self.entries
        entries.append(EntryInfo(entries[like].shape, entries[like].dtype, name, external))
        return len(entries) - 1

    def seed_heads(self) -> list:
        """Per head, the entry its gradient is given in (None: no gradient flows from it)."""
        head_grads: list = []
        for h in self.g.heads:
            if self.needs[h] and h not in self.terms:
                hg = self.new_entry(h, f"{self.entries[h].name}_head_grad", external=True)
                self.terms[h] = [hg]
                head_grads.append(hg)
            else:
                head_grads.append(self.terms[h][0] if h in self.terms and self.needs[h] else None)
        return head_grads

    def gradient_of(self, e: int) -> int | None:
        """The entry holding ``e``'s whole gradient: its one term, or a sum of them."""
        ts = self.terms.get(e, [])
        if len(ts) <= 1:
            return ts[0] if ts else None
        s = self.new_entry(e, f"{self.entries[e].name}_grad_sum")
        self.ops.append(ExecOp("sum", None, reads=list(ts), writes=[s], req=[OpReqType.WRITE_TO]))
        return s

    def node(self, nid: int) -> None:
        """The backward op of node ``nid``, if a gradient flows through it to a wanted argument."""
        g, needs = self.g, self.needs
        node = g.nodes[nid]
        if node.is_variable or node.prop.zero_gradient:
            return
        args, _ = g.split_inputs(nid)
        if not any(needs[e] for e in args):
            return
        prop = node.prop
        outs = list(range(g.entry_ptr[nid], g.entry_ptr[nid + 1]))
        og = [self.gradient_of(e) for e in outs]
        if prop.non_differentiable and any(o is not None for o in og):
            # a gradient would have to flow through it: MXNet refuses to bind such a graph
            raise MXAsyncError(f"{prop.label}: the op is non-differentiable (it has no gradient); wrap its output "
                               "in stop_gradient or bind with grad_req='null' for its inputs")
        deps = backward_deps(prop, len(args), len(outs))
        if any(d[0] == "og" for d in deps) and all(o is None for o in og):
            return  # only zeros would flow back
        for k, o in enumerate(og):
            if o is None and ("og", k) in deps:
                z = og[k] = self.new_entry(outs[k], f"{self.entries[outs[k]].name}_zero_grad")
                self.ops.append(ExecOp("zero", None, writes=[z], req=[OpReqType.WRITE_TO]))
        in_grad: list = []
        names = prop.list_arguments()
        for k, e in enumerate(args):
            if needs[e]:
                gi = self.new_entry(e, f"{node.name}_backward_{names[k]}")
                self.terms.setdefault(e, []).append(gi)
                in_grad.append(gi)
            else:
                in_grad.append(None)
        reads = [og[k] for k in range(len(outs)) if ("og", k) in deps and og[k] is not None]
        reads += [args[k] for k in range(len(args)) if ("in", k) in deps]
        reads += [outs[k] for k in range(len(outs)) if ("out", k) in deps]
        inplace = _inplace(prop, og, args, outs, in_grad, deps) if self.redirect else []
        writes = [x for x in in_grad if x is not None]
        self.ops.append(ExecOp("backward", nid, reads=reads, writes=writes, req=[OpReqType.WRITE_TO] * len(writes),
                               inplace=inplace, og=og, in_grad=in_grad, deps=deps))

    def arg_grads(self, grad_req: dict) -> dict[int, int]:
        """Each wanted argument's gradient entry, and the op that stores its terms there by its request."""
        arg_grads: dict[int, int] = {}
        ops = self.ops
        producer = {w: op for op in ops for w in op.writes}  # one map, not a scan of every op per argument
        for nid, req in grad_req.items():
            if req == OpReqType.NULL:
                continue
            e = self.g.entry_ptr[nid]
            target = arg_grads[nid] = self.new_entry(e, f"{self.g.nodes[nid].name}_grad", external=True)
            ts = self.terms.get(e, [])
            if not ts:
                if req != OpReqType.ADD_TO:
                    ops.append(ExecOp("zero", None, writes=[target], req=[req]))
            elif len(ts) > 1 or not self.redirect or not _redirect(producer.get(ts[0]), ts[0], target, req):
                ops.append(ExecOp("sum", None, reads=list(ts), writes=[target], req=[req]))
        return arg_grads


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
