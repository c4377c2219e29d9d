"""``Executor``: a bound graph that runs forward and backward as engine pushes.

Binding infers every shape and type, builds the gradient ops, plans memory,
allocates one chunk per storage block and compiles one closure per op.
``forward``/``backward`` then only push, grouped into bulk segments of
``Engine.get().bulk_size`` ops; results are NDArrays, so scripts read them
with ``asnumpy()`` and async code ``await``s them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..autograd.gradient import EntryInfo, ExecOp, build_backward
from ..backends import generation as backend_generation
from ..backends import get_backend
from ..base import MXAsyncError, MXAsyncValueError
from ..ndarray._chunk import alloc_chunk
from ..ndarray._sparse_array import new_sparse
from ..ndarray.ndarray import NDArray, array, zeros
from ..operator import OpReqType
from ..runtime.engine import Engine
from ..symbol._cse import cse_enabled, eliminate_common_expr
from ..symbol._indexed import IndexedGraph
from ..symbol._infer import infer_again
from .inference_fold import compile_fold, find_folds, fold_plan_reads
from .memory import PlanOp, plan_memory
from .program import Step, compile_ops
from .stypes import infer_stypes, var_stype

__all__ = ["Executor"]


def _optimized(sym):
    """``sym`` after the bind-time graph passes; ``sym`` itself when they change nothing.

    The arguments and aux states must stay the same, in the same order (the caller's arrays
    are bound by position); a pass result that moved them is not used.
    """
    if not cse_enabled():
        return sym
    opt = eliminate_common_expr(sym)
    if opt is not sym and (opt.list_arguments() != sym.list_arguments()
                           or opt.list_auxiliary_states() != sym.list_auxiliary_states()):
        return sym
    return opt


class Executor:
    """Made by ``Symbol.simple_bind`` / ``Symbol.bind``; holds the arrays of one bound graph."""

    def __init__(self, sym, ctx, arg_arrays: list, grad_arrays: list, grad_reqs: list, aux_arrays: list,
                 shared_exec: Executor | None = None, graph: IndexedGraph | None = None):
        self._symbol = sym
        self._ctx = ctx
        self._xp = get_backend(ctx.device_type).xp
        run = _optimized(sym)  # the graph that runs: common subexpressions merged (MXNet's bind pass)
        g = self._graph = graph if graph is not None and graph.symbol is run else IndexedGraph(run)
        counts = Counter(g.nodes[i].name for i in g.input_nodes)
        dup = {n for n, c in counts.items() if c > 1}
        if dup:
            raise MXAsyncError(f"bind: the symbol has several inputs named {sorted(dup)}")
        self.arg_arrays, self.grad_arrays, self.aux_arrays = list(arg_arrays), list(grad_arrays), list(aux_arrays)
        self._grad_reqs = [OpReqType.parse(r) for r in grad_reqs]
        self._monitor = None
        self._monitor_all = False
        self._op_hook = None  # (callback, monitor_all): Gluon's register_op_hook on a CachedOp
        self._build(shared_exec)

    # -- binding ---------------------------------------------------------------
    def _build(self, shared_exec) -> None:
        g = self._graph
        var_arrays = dict(zip(g.arg_nodes, self.arg_arrays, strict=True))
        var_arrays.update(zip(g.aux_nodes, self.aux_arrays, strict=True))
        shapes = infer_again(g, {n: a.shape for n, a in var_arrays.items()}, "shape")
        types = infer_again(g, {n: np.dtype(a.dtype) for n, a in var_arrays.items()}, "type")
        entries: list[EntryInfo] = []
        for node in g.nodes:
            for k in range(node.num_outputs()):
                e = len(entries)
                if shapes[e] is None or types[e] is None:
                    raise MXAsyncError(f"bind: cannot infer the {'shape' if shapes[e] is None else 'type'} of "
                                       f"{node.output_name(k)!r}")
                entries.append(EntryInfo(shapes[e], types[e], node.output_name(k), external=node.is_variable))
        fwd_ops = []
        for nid, node in enumerate(g.nodes):
            if node.is_variable:
                continue
            args, _ = g.split_inputs(nid)
            outs = list(range(g.entry_ptr[nid], g.entry_ptr[nid + 1]))
            pairs = node.prop.forward_inplace_option([("in", k) for k in range(len(args))],
                                                     [("out", k) for k in range(len(outs))])
            tok = {("in", k): e for k, e in enumerate(args)} | {("out", k): e for k, e in enumerate(outs)}
            fwd_ops.append(ExecOp("forward", nid, reads=list(args), writes=outs,
                                  inplace=[(tok[a], tok[b]) for a, b in pairs]))
        grad_req = {nid: r for nid, r in zip(g.arg_nodes, self._grad_reqs, strict=True)}
        self._bwd_ops, self._head_grads, self._arg_grad_entries = [], [], {}
        if any(r != OpReqType.NULL for r in self._grad_reqs):
            self._bwd_ops, self._head_grads, self._arg_grad_entries = build_backward(g, entries, grad_req)
        self._entries = entries
        self._stypes = self._storage_types(var_arrays, entries)
        nbytes = [int(np.prod(e.shape, dtype=np.int64)) * np.dtype(e.dtype).itemsize for e in entries]
        external = {i for i, e in enumerate(entries) if e.external}
        if self._stypes is not None:  # sparse entries have their own arrays (executor/stypes.py)
            external |= {i for i, s in enumerate(self._stypes) if s != "default"}
        ops = self._ops = fwd_ops + self._bwd_ops
        # inference BatchNorm folded into its convolution (inference_fold.py); the folded push reads the
        # convolution's inputs until the chain's end, which the plan must know
        self._folds = find_folds(g, fwd_ops, ops, entries, self._stypes is not None)
        extra = fold_plan_reads(self._folds)
        self._plan = plan_memory(nbytes, [PlanOp(o.reads + extra.get(o.nid, []) if o.kind == "forward" else o.reads,
                                                 o.writes, o.inplace) for o in ops], external,
                                 persistent=set(g.heads))
        self._unplanned = plan_memory(nbytes, [PlanOp(o.reads, o.writes) for o in ops], external,
                                      persistent=set(g.heads), enabled=False)
        self._allocate(var_arrays, shared_exec)
        self._fwd_ops = fwd_ops
        self._compile()
        self.outputs = [self._arrays[e] for e in g.heads]

    def _compile(self) -> None:
        """The steps that push the graph's ops, with the kernels of the backend serving the context now."""
        self._backend_gen = backend_generation()
        self._xp = get_backend(self._ctx.device_type).xp
        self._fwd_steps = compile_ops(self, self._fwd_ops)
        self._bwd_steps = compile_ops(self, self._bwd_ops)
        self._infer_steps = self._folded_steps() if self._folds else self._fwd_steps

    def _folded_steps(self) -> list[Step]:
        """The forward steps of an inference run, each folded chain's ops replaced by its pushes."""
        first = {f.conv: f for f in self._folds}
        inner = {nid for f in self._folds for nid in f.nodes[1:]}
        steps = []
        for op, st in zip(self._fwd_ops, self._fwd_steps, strict=True):
            if op.nid in first:
                steps += [Step("folded", (launch, launch))
                          for launch in compile_fold(self._graph, first[op.nid], self._arrays, self._ctx, self._xp)]
            elif op.nid not in inner:
                steps.append(st)
        return steps

    def _storage_types(self, var_arrays: dict, entries: list) -> list | None:
        """Every entry's storage type when the graph holds sparse arrays, else None (all dense)."""
        g = self._graph
        var_st = {nid: a.stype for nid, a in var_arrays.items()}
        grad_st = {e: self.grad_arrays[g.arg_index[nid]].stype
                   for nid, e in self._arg_grad_entries.items()}
        if all(s == "default" for s in var_st.values()) and all(s == "default" for s in grad_st.values()) and \
                all(var_stype(g.nodes[n]) == "default" for n in g.input_nodes):
            return None
        stypes = infer_stypes(g, var_st) + ["default"] * (len(entries) - g.num_entries)
        for e, s in grad_st.items():
            stypes[e] = s
        return stypes

    def _allocate(self, var_arrays: dict, shared_exec) -> None:
        g, plan = self._graph, self._plan
        reuse = shared_exec._blocks if shared_exec is not None else []
        self._blocks = []
        for b, size in enumerate(plan.block_sizes):
            old = reuse[b] if b < len(reuse) else None
            self._blocks.append(old if old is not None and old.base.size >= size
                                else alloc_chunk((max(size, 1),), np.uint8, self._ctx, self._xp))
        arrays: list = [None] * len(self._entries)
        for nid, a in var_arrays.items():
            arrays[g.entry_ptr[nid]] = a
        for nid, e in self._arg_grad_entries.items():
            arrays[e] = self.grad_arrays[g.arg_index[nid]]
        for e in self._head_grads:
            if e is not None and arrays[e] is None:
                info = self._entries[e]
                arrays[e] = array(np.ones(info.shape, info.dtype), ctx=self._ctx, dtype=info.dtype)
        stypes = self._stypes
        for e, info in enumerate(self._entries):
            if arrays[e] is None and stypes is not None and stypes[e] != "default":
                arrays[e] = new_sparse(stypes[e], info.shape, info.dtype, self._ctx)
                continue
            if arrays[e] is None:
                b = plan.storage[e]
                if b < 0:  # written by no op (an unused hidden output): give it its own memory
                    chunk = alloc_chunk(info.shape, info.dtype, self._ctx, self._xp)
                    arrays[e] = NDArray(chunk, chunk.base)
                    continue
                chunk = self._blocks[b]
                n = int(np.prod(info.shape, dtype=np.int64)) * np.dtype(info.dtype).itemsize
                arrays[e] = NDArray(chunk, chunk.base[:n].view(info.dtype).reshape(info.shape))
        self._arrays = arrays

    # -- running --------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the graph; ``kwargs`` are copied into the named arguments first."""
        for name, value in kwargs.items():
            if name not in self.arg_dict:
                raise MXAsyncError(f"forward: unknown argument {name!r}; arguments are {list(self.arg_dict)}")
            self.arg_dict[name][:] = value
        if self._backend_gen != backend_generation():  # mx.backends.use(...) since: its kernels from now on
            self._compile()
        watched = self._monitor is not None or self._op_hook is not None  # they see every op's output
        steps = self._fwd_steps if is_train or watched else self._infer_steps
        self._run(steps, 1 if is_train else 0, monitor=True)
        return self.outputs

    async def forward_async(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """``forward``, then wait (without blocking the event loop) until the outputs are ready."""
        outs = self.forward(is_train, **kwargs)
        for o in outs:
            await o
        return outs

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Push the gradient ops; ``out_grads`` (one per output) seed heads whose op needs them."""
        if not self._bwd_ops and not any(r != OpReqType.NULL for r in self._grad_reqs):
            return  # nothing asks for a gradient (grad_req='null' everywhere): a no-op, as in MXNet
        if out_grads is not None:
            if isinstance(out_grads, NDArray):
                out_grads = [out_grads]
            if len(out_grads) < len(self.outputs):
                raise MXAsyncError(f"backward: {len(out_grads)} out_grads for {len(self.outputs)} outputs")
            out_grads = list(out_grads)[:len(self.outputs)]  # MXNet reads one per output and ignores the rest
            for e, og in zip(self._head_grads, out_grads, strict=True):
                if e is not None and og is not None:
                    if og.shape == self._arrays[e].shape:
                        og.copyto(self._arrays[e])  # 0-d heads too (NumPy-shape graphs)
                    else:
                        self._arrays[e][:] = og
        if self._backend_gen != backend_generation():
            self._compile()
        self._run(self._bwd_steps, 1, monitor=True)

    def _run(self, steps, flag: int, monitor: bool) -> None:
        eng = Engine.get()
        ctx = self._ctx
        callback = self._monitor if monitor else None
        hook = self._op_hook if monitor else None
        with eng.bulk(eng.bulk_size):
            for st in steps:
                if hook is not None and hook[1] and st.kind == "forward":
                    for name, e in st.op_inputs:
                        hook[0](name.encode(), st.op.encode(), self._arrays[e])
                st.launches[flag].push(ctx)
                if hook is not None and st.kind == "forward":
                    for name, e in st.outputs:
                        hook[0](name.encode(), st.op.encode(), self._monitored(e))
                elif hook is not None and st.kind == "backward":  # a CachedOp names them <node>_backward_<k>
                    for k, (_, e) in enumerate(st.outputs):
                        hook[0](f"{st.name}_{k}".encode(), st.op.encode(), self._monitored(e))
                if callback is not None and st.kind in ("forward", "backward"):
                    if self._monitor_all:
                        for name, e in st.inputs:
                            callback(name, self._arrays[e])
                    for name, e in st.outputs:
                        callback(name, self._monitored(e))

    def _monitored(self, e) -> NDArray:
        if isinstance(e, tuple):  # an input gradient nobody keeps: zeros of its shape
            return zeros(e[0], ctx=self._ctx, dtype=e[1])
        return self._arrays[e]

    def set_monitor_callback(self, callback, monitor_all: bool = False) -> None:
        """Call ``callback(name, NDArray)`` for every output of every op as forward pushes it, and for
        every input gradient as backward pushes it (``<node>_backward_output<k>``, MXNet's names)."""
        self._monitor = callback
        self._monitor_all = monitor_all

    def set_op_hook(self, callback, monitor_all: bool = False) -> None:
        """Call ``callback(node_name, op_name, NDArray)`` (names as bytes, as MXNet's C callback gives them) for
        every output of every op forward (``<node>_<output>``) and backward (``<node>_backward_<k>``) pushes,
        and first for its inputs in forward when ``monitor_all`` (``<node>_<argument>``): what Gluon's
        ``register_op_hook`` installs on a CachedOp."""
        self._op_hook = (callback, bool(monitor_all)) if callback is not None else None

    # -- views by name ------------------------------------------------------------------
    @property
    def arg_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._symbol.list_arguments(), self.arg_arrays, strict=True))

    @property
    def grad_dict(self) -> dict[str, NDArray]:
        return {n: a for n, a in zip(self._symbol.list_arguments(), self.grad_arrays, strict=True) if a is not None}

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._symbol.list_auxiliary_states(), self.aux_arrays, strict=True))

    @property
    def output_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._symbol.list_outputs(), self.outputs, strict=True))

    def copy_params_from(self, arg_params: dict, aux_params: dict | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy arrays into the arguments and aux states of the same names."""
        for params, target, what in ((arg_params, self.arg_dict, "argument"), (aux_params or {}, self.aux_dict, "aux")):
            for name, value in params.items():
                if name in target:
                    src = value if isinstance(value, NDArray) else array(value, ctx=self._ctx)
                    src.astype(target[name].dtype).copyto(target[name])
                elif not allow_extra_params:
                    raise MXAsyncValueError(f"copy_params_from: {name!r} is not an {what} of the symbol "
                                            "(pass allow_extra_params=True to ignore it)")

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs) -> Executor:
        """A new executor for new input shapes that shares this one's parameters and memory."""
        from .bind import reshape

        return reshape(self, partial_shaping, allow_up_sizing, kwargs)

    # -- introspection ------------------------------------------------------------------
    def get_optimized_symbol(self):
        """The graph this executor runs, as a Symbol: the bound symbol after the bind passes
        (common subexpression elimination unless ``MXNET_ELIMINATE_COMMON_EXPR=0``)."""
        return self._graph.symbol.__copy__()

    @property
    def planned_bytes(self) -> int:
        return self._plan.planned_bytes

    @property
    def unplanned_bytes(self) -> int:
        return self._unplanned.planned_bytes

    def debug_str(self) -> str:
        """Ops in execution order with their arrays' storage blocks; ends with ``Total N MB allocated``."""
        ent, plan = self._entries, self._plan
        lines = ["Symbol Outputs:"] + [f"\toutput[{i}]={n}" for i, n in enumerate(self._symbol.list_outputs())]

        def desc(e: int) -> str:
            where = "external" if plan.storage[e] < 0 else f"block {plan.storage[e]}"
            inplace = ", inplace" if e in plan.inplace else ""
            return f"{ent[e].name} {tuple(ent[e].shape)} {np.dtype(ent[e].dtype).name} [{where}{inplace}]"

        for op in self._ops:
            label = self._graph.nodes[op.nid].name if op.nid is not None else op.kind
            lines += ["--------------------", f"Op:{op.kind}, Name={label}"]
            lines += [f"\tread  {desc(e)}" for e in op.reads]
            lines += [f"\twrite {desc(e)}" for e in op.writes]
        lines.append(f"Total {plan.planned_bytes >> 20} MB allocated")
        return "\n".join(lines)
