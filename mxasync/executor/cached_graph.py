"""``CachedGraph``: a symbol's graph run on our Executor, called with NDArrays (MXNet's CachedOp
engine; gluon's hybridized blocks and ``mx.nd.CachedOp`` both run on it).

One executor is bound per input signature (context, shapes, dtypes and, while
recording, which inputs need a gradient).  Parameters are bound as they are
(no copy: the trainer's in-place updates are seen by the next forward and the
engine orders them), data inputs are copied into the executor's own arrays,
and outputs are copied out so that a later call never overwrites what an
earlier one returned.  Under ``autograd.record()`` a call is one node on the
tape; its backward seeds the executor's head gradients and pushes the
executor's backward ops, and the executor's gradient arrays become the
gradient terms of the inputs.

An executor whose forward state is still needed by a recorded graph (a node
not yet backpropagated) is busy; a second call with the same signature then
binds another one, as MXNet keeps a pool of CachedOp states.

The cache is bounded: it keeps the executors of the :func:`cache_size` signatures
used most recently (``MXASYNC_CACHED_GRAPH_SIZE``, default 16) and drops the least
recently used one beyond that, so a model fed many shapes (sequence lengths, batch
sizes) does not grow without end.  A new executor shares the memory blocks of the
one used last wherever they are big enough (their plans have the same shape, and
the engine orders their ops on a shared block); a call never runs an executor that
shares a block with another one whose recorded state is still awaited by a
backward, so sharing cannot change a result.  Everything is freed with the graph.

>>> import mxasync as mx
>>> x = mx.sym.var('data')
>>> op = CachedGraph(x * 2 + 1)
>>> op([mx.nd.array([1.0, 2.0])], [True])[0].asnumpy().tolist()
[3.0, 5.0]
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict

from .. import autograd
from ..autograd import tape as _tape
from ..base import MXAsyncError
from ..ndarray._invoke import invoke
from ..ndarray.ndarray import NDArray, zeros
from ..operator import OpReqType
from ..symbol._node import op_params, topo_order
from .executor import Executor

__all__ = ["CachedGraph", "cache_size"]

_DEFAULT_CACHE_SIZE = 16


def cache_size() -> int:
    """Input signatures whose executors a CachedGraph keeps (``MXASYNC_CACHED_GRAPH_SIZE``, default 16).

    >>> cache_size() > 0
    True
    """
    raw = os.environ.get("MXASYNC_CACHED_GRAPH_SIZE", "")
    if not raw:
        return _DEFAULT_CACHE_SIZE
    try:
        value = int(raw)
    except ValueError:
        raise MXAsyncError(f"MXASYNC_CACHED_GRAPH_SIZE must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise MXAsyncError(f"MXASYNC_CACHED_GRAPH_SIZE must be a positive integer, got {raw!r}")
    return value


# id(gradient buffer) -> weakref to the state whose executor writes it directly (at most one may)
_claims: dict = {}


class _State:
    """One bound executor and what it was bound to."""

    __slots__ = ("exe", "bound", "data_buf", "arg_pos", "direct", "owner", "blocks", "__weakref__")

    def __init__(self, exe, bound, data_buf, arg_pos, direct):
        self.exe, self.bound, self.data_buf, self.arg_pos = exe, bound, data_buf, arg_pos
        self.direct = direct  # input index -> the parameter's gradient buffer the executor writes into
        self.owner = None  # weakref to the first output of the recorded call that still needs this state
        self.blocks = frozenset(id(b) for b in exe._blocks)  # its memory blocks (some shared with others)

    def matches(self, inputs, is_data) -> bool:
        return all(self.bound[k] is x for k, x in enumerate(inputs) if not is_data[k]) and all(
            inputs[k]._ag is not None and inputs[k]._ag.grad is g for k, g in self.direct.items())

    def busy(self) -> bool:
        out = self.owner() if self.owner is not None else None
        if out is None:
            return False
        e = out._ag
        return e is not None and e.node is not None and not e.node.freed


class _GraphNode:
    """What the autograd tape holds for a cached-op call (a ``TapeOp`` standing in for an operator property)."""

    op_name = "_CachedOp"
    label = "_CachedOp"
    zero_gradient = False
    tape_backward_recorded = False  # the executor's kernels compute it

    def __init__(self, state: _State, repeated: list, symbol=None, input_names: tuple = ()):
        self.state = state
        self.repeated = repeated
        self.symbol, self.input_names = symbol, input_names  # the call's graph, for autograd.get_symbol

    def tape_backward(self, node, out_grads: list, want: list, train_mode: bool) -> list:
        """Push the executor's backward; return one gradient array (or None) per input of the call."""
        exe = self.state.exe
        ogs = [g if g is not None else zeros(o.shape, o.context, o.dtype)
               for g, o in zip(out_grads, exe.outputs, strict=True)]
        for same in self.repeated:  # one graph entry returned several times: its gradients add up (MXNet's
            total = ogs[same[0]]    # CachedOp); the executor seeds a repeated head from its last listing
            for k in same[1:]:
                total = total + ogs[k]
            ogs[same[-1]] = total
        exe.backward(ogs)
        out = []
        for i, w in enumerate(want):
            pos = self.state.arg_pos[i]
            out.append(exe.grad_arrays[pos] if w and pos is not None else None)
        return out


class CachedGraph:
    """Run ``sym`` on executors; inputs are given in ``sym.list_inputs()`` order.

    ``is_data[k]`` says whether input ``k`` is copied into the executor's own array (data) or
    bound as it is (parameters and aux states: in-place updates on either side are shared).
    """

    def __init__(self, sym, flags=()):
        self._sym = sym
        self._input_names = sym.list_inputs()
        self._arg_index = {n: k for k, n in enumerate(sym.list_arguments())}
        self._aux_names = sym.list_auxiliary_states()
        self._flags = dict(flags)
        self._states: OrderedDict = OrderedDict()  # signature -> its states, least recently used first
        self._live: weakref.WeakSet = weakref.WeakSet()  # every state still alive (cached or on a tape)
        self.max_signatures = cache_size()
        self._lock = threading.Lock()
        listings: dict = {}
        for k, head in enumerate(sym._heads):
            listings.setdefault(head[:2], []).append(k)
        self._repeated = [ks for ks in listings.values() if len(ks) > 1]
        self._hook = None  # (callback, monitor_all) of register_op_hook
        self._inline = _inline_order(sym, self._flags)
        self._dynamic = _dynamic_order(sym)

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        """Call ``callback(node_name, op_name, NDArray)`` per op output (and input, ``monitor_all``) as each
        call runs (MXNet's ``CachedOp._register_op_hook``; names are bytes, as its C callback gives them)."""
        self._hook = (callback, bool(monitor_all)) if callback is not None else None
        for st in list(self._live):
            st.exe.set_op_hook(callback, monitor_all)

    def __call__(self, inputs: list, is_data: list) -> list:
        if len(inputs) != len(self._input_names):
            raise MXAsyncError(f"CachedOp: {len(inputs)} inputs for a graph of {len(self._input_names)} "
                               f"({self._input_names})")
        ctx = inputs[0].context
        for n, x in zip(self._input_names, inputs, strict=True):
            if not isinstance(x, NDArray):
                raise MXAsyncError(f"CachedOp: input {n!r} must be an NDArray, got {type(x).__name__}")
            if x.context != ctx:
                raise MXAsyncError(f"CachedOp: input {n!r} is on {x.context} but the others are on {ctx}")
        if self._dynamic is not None:  # an output shape known only from values: run op by op, as MXNet does
            return _run_inline(self._dynamic, self._sym, dict(zip(self._input_names, inputs, strict=True)), self._hook)
        recording = autograd.is_recording()
        if recording and self._inline is not None:
            return _run_inline(self._inline, self._sym, dict(zip(self._input_names, inputs, strict=True)), self._hook)
        need = tuple(x._ag is not None for x in inputs) if recording else ()
        if not any(need):
            need = ()
        key = (ctx, need, tuple((x.shape, x.dtype) for x in inputs))
        # pushes never block, so holding the lock is brief; it keeps two threads from interleaving
        # their input copies and forward pushes on one executor
        with self._lock:
            state = self._state(key, inputs, is_data, ctx, need)
            for k, buf in state.data_buf.items():
                inputs[k].copyto(buf)
            exe = state.exe
            exe.forward(is_train=autograd.is_training())
            outs = [o.copyto(ctx) for o in exe.outputs]
            if need:
                _tape.record_op(_GraphNode(state, self._repeated, self._sym, tuple(self._input_names)), ctx, list(inputs), [], outs, autograd.is_training())
                state.owner = weakref.ref(outs[0])
        return outs

    def _state(self, key, inputs, is_data, ctx, need) -> _State:
        pool = self._states.get(key)
        if pool is None:
            pool = self._states[key] = []
        self._states.move_to_end(key)
        busy = [st for st in self._live if st.busy()]
        for st in pool:
            if st.matches(inputs, is_data):
                if not st.busy() and not _overlaps(st, busy):
                    return st
            else:  # a parameter's array or gradient was replaced (re-initialized, cast, grad_req): rebind
                pool.remove(st)
                return self._state(key, inputs, is_data, ctx, need)
        donor = next((st.exe for k in reversed(self._states) for st in self._states[k]
                      if st.exe._ctx == ctx and st not in busy and not _overlaps(st, busy)), None)
        st = self._bind(inputs, is_data, ctx, need, donor)
        pool.append(st)
        self._live.add(st)
        while len(self._states) > self.max_signatures:
            # the least recently used signature goes (a recorded graph still holding one keeps it alive)
            self._states.popitem(last=False)
        return st

    def _bind(self, inputs, is_data, ctx, need, donor=None) -> _State:
        by_name, data_buf, arg_pos = {}, {}, []
        for k, (n, x) in enumerate(zip(self._input_names, inputs, strict=True)):
            if is_data[k]:
                x = data_buf[k] = zeros(x.shape, ctx, x.dtype)
            by_name[n] = x
            arg_pos.append(self._arg_index.get(n))
        args = [by_name[n] for n in self._arg_index]
        grads: list = [None] * len(args)
        reqs = ["null"] * len(args)
        direct = {}
        for k, x in enumerate(inputs):
            pos = arg_pos[k]
            if not (need and need[k]) or pos is None:
                continue
            reqs[pos] = "write"
            g = _direct_grad(x) if not is_data[k] else None
            if g is not None:  # the parameter's own buffer: no copy after backward (autograd sees it in place)
                direct[k] = grads[pos] = g
            else:
                grads[pos] = zeros(x.shape, ctx, x.dtype)
        aux = [by_name[n] for n in self._aux_names]
        exe = Executor(self._sym, ctx, args, grads, reqs, aux, shared_exec=donor)
        if self._hook is not None:
            exe.set_op_hook(*self._hook)
        bound = [None if is_data[k] else x for k, x in enumerate(inputs)]
        st = _State(exe, bound, data_buf, arg_pos, direct)
        for g in direct.values():
            _claims[id(g)] = weakref.ref(st)
        return st


def _overlaps(st: _State, busy: list) -> bool:
    """Does ``st`` share a memory block with another state whose recorded forward awaits its backward?"""
    return any(o is not st and not o.blocks.isdisjoint(st.blocks) for o in busy)


def _direct_grad(x):
    """``x``'s gradient buffer when an executor may write it in place: a variable with grad_req
    'write' whose buffer no other live executor writes (two would overwrite each other)."""
    e = x._ag
    if e is None or e.node is not None or e.grad is None or e.req != OpReqType.WRITE_TO:
        return None
    for key in [k for k, ref in _claims.items() if ref() is None]:
        del _claims[key]
    ref = _claims.get(id(e.grad))
    owner = ref() if ref is not None else None
    if owner is not None and owner.direct and any(g is e.grad for g in owner.direct.values()):
        return None
    return e.grad


def _inline_order(sym, flags: dict) -> list | None:
    """The graph's nodes when a recorded call runs them one by one (MXNet's CachedOp inlining: no
    ``static_alloc`` and at most ``inline_limit`` ops, default 2), else None.  Each op then becomes its
    own node on the autograd tape, as if the block ran imperatively."""
    limit = int(flags.get("inline_limit", 2))
    if _truthy(flags.get("static_alloc", False)):
        return None
    order = topo_order(sym._heads)
    ops = [n for n in order if not n.is_variable]
    if len(ops) > limit:
        return None
    # what invoke cannot run node by node: hidden outputs read downstream, subgraphs (control flow)
    if any(n.prop.num_visible_outputs() != n.num_outputs() or n.op.name in _CONTROL_FLOW for n in ops):
        return None
    return order


_CONTROL_FLOW = ("_foreach", "_while_loop", "_cond")


def _dynamic_order(sym) -> list | None:
    """The graph's nodes when an op's output shape depends on input values (``shape_from_values``:
    ``contrib.boolean_mask``, ``np.unique``, ``np.bincount``), which no executor can plan: every call then runs the ops one by one, as
    MXNet's CachedOp does for dynamic shapes. None for the other graphs."""
    order = topo_order(sym._heads)
    ops = [n for n in order if not n.is_variable]
    if not any(n.prop.shape_from_values is not None for n in ops):
        return None
    hidden = any(i >= n.prop.num_visible_outputs() for node in ops for n, i, _ in node.inputs if not n.is_variable)
    if hidden or any(n.op.name in _CONTROL_FLOW for n in ops):
        raise MXAsyncError("CachedOp: a graph with an op whose output shape depends on its input values (" +
                           ", ".join(sorted({n.op.name for n in ops if n.prop.shape_from_values is not None})) +
                           ") runs op by op, which cannot read hidden outputs or run control flow")
    return order


def _truthy(v) -> bool:
    return v if isinstance(v, bool) else str(v).lower() in ("1", "true")


def _run_inline(order: list, sym, by_name: dict, hook) -> list:
    vals: dict = {}
    for node in order:
        if node.is_variable:
            vals[id(node)] = [by_name[node.name]]
            continue
        ins = [vals[id(n)][i] for n, i, _ in node.inputs]
        op = node.op.name.encode()
        if hook is not None and hook[1]:
            for a, x in zip(node.prop.list_arguments(), ins, strict=False):
                hook[0](f"{node.name}_{a}".encode(), op, x)
        out = invoke(node.op.name, ins, is_train=autograd.is_training(), **op_params(node.attrs))
        outs = vals[id(node)] = list(out) if isinstance(out, (list, tuple)) else [out]
        if hook is not None:
            for k, o in enumerate(outs):
                hook[0](node.output_name(k).encode(), op, o)
    # a head that is an input comes back as a (recorded) copy, as from the executor
    return [vals[id(n)][i] if not n.is_variable else invoke("_copy", [vals[id(n)][i]]) for n, i, _ in sym._heads]
