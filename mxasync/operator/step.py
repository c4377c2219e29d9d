"""The one way an op call becomes an engine push.

Imperative calls (``ndarray/_invoke.py``), the tape's backward (``autograd/backprop.py``) and
bound graphs (``executor/program.py``) describe *what* to run: an op property, a context, the
arrays (anything with ``_data``, ``_chunk.var``, ``shape`` and ``dtype``: NDArrays) and the
request types.  This module decides *how*: the kernel (the op's dense one, its sparse one, or
MXNet's storage fallback, by the storage types of the arrays), the resources, the
:class:`OpContext` the kernel gets, which arrays backward really reads (the op's
``declare_backward_dependency``; NaN placeholders for the rest), the engine vars it reads and
writes (de-duplicated, aux states and in-place inputs included), and whether it is pushed as a
sync or an asynchronous engine op.  Gradient sums (:func:`accumulate`) are built here too.

:class:`ForwardPlan` and :class:`BackwardPlan` hold what depends only on the op, the context
and the training flag (cached by the callers); their ``launch`` binds arrays and returns a
:class:`Launch`, the one thing pushed.

>>> import mxasync as mx
>>> from mxasync.operator.registry import get_op
>>> x = mx.nd.array([1.0, -2.0]); y = mx.nd.zeros((2,))
>>> prop = get_op("relu").prepare()
>>> ForwardPlan(prop, x.context, False).launch([x], [y]).push(x.context)
>>> y.asnumpy().tolist()
[1.0, 0.0]
"""

from __future__ import annotations

from ..backends import get_backend, on_switch
from ..runtime.context import Context
from ..runtime.engine import Engine
from ..runtime.resource import ResourceManager
from ..runtime.run_context import RunContext
from .base import ADD_TO, NULL, WRITE_TO, OpContext, placeholder
from .sparse import formats as st
from .sparse.dispatch import add_values, dense_backward, execute, plan_for, store, value_of
from .sparse.formats import DEFAULT, SparseStore
from .widen import widen_backward, widen_forward, widens

__all__ = ["Launch", "ForwardPlan", "BackwardPlan", "accumulate", "INLINE_ELEMENTS", "backward_deps",
           "host_context", "launch_inline"]

# Ops on fewer elements than this run in the pushing thread (docs/performance.md: below ~100k
# float32 elements an op costs less than the parallelism a worker buys back).
INLINE_ELEMENTS = 65536

_engine = Engine.get
_CPU0 = Context("cpu", 0)
_BACKENDS: dict = {}


def _xp(ctx):
    xp = _BACKENDS.get(ctx.device_type)
    if xp is None:
        xp = _BACKENDS[ctx.device_type] = get_backend(ctx.device_type).xp
    return xp


def _forget_backends() -> None:
    """Another backend serves a device type now (``mx.backends.use``): what was looked up goes."""
    _BACKENDS.clear()
    BackwardPlan._cache.clear()


def _sparse(raw) -> bool:
    return raw.__class__ is SparseStore


def _dedupe(reads: list, writes: list) -> tuple[list, list]:
    writes = list(dict.fromkeys(writes))
    return [v for v in dict.fromkeys(reads) if v not in writes], writes


class Launch:
    """One engine push: ``fn(rctx)`` (or ``fn(rctx, on_complete)`` when ``asynchronous``) reading
    ``reads`` and writing ``writes``."""

    __slots__ = ("name", "fn", "reads", "writes", "asynchronous", "inline")

    def __init__(self, name: str, fn, reads: list, writes: list, asynchronous: bool = False,
                 inline: bool | None = None):
        self.name, self.fn, self.reads, self.writes = name, fn, reads, writes
        self.asynchronous, self.inline = asynchronous, inline

    def push(self, ctx, priority: int = 0) -> None:
        if self.asynchronous:
            _engine().push_async(self.fn, ctx, self.reads, self.writes, priority=priority, name=self.name)
        else:
            _engine().push_sync(self.fn, ctx, self.reads, self.writes, priority=priority, name=self.name,
                                inline=self.inline)


class ForwardPlan:
    """An op's forward on ``ctx`` in one training mode: kernel, resources, whether it is asynchronous."""

    __slots__ = ("prop", "ctx", "is_train", "name", "fn", "asynchronous", "resources", "res_vars",
                 "mutate_inputs", "op_ctx", "req", "simple", "_push_kernel")

    def __init__(self, prop, ctx, is_train: bool, name: str | None = None, dtypes=()):
        self.prop, self.ctx, self.is_train = prop, ctx, is_train
        self.name = name or prop.op_name
        # done when it calls on_complete (SyncBatchNorm meeting its other devices): pushed with push_async
        self.asynchronous = prop.asynchronous(is_train)
        self.fn = prop.forward_async_fn(ctx) if self.asynchronous else prop.forward_fn(ctx)
        if widens(prop, ctx, dtypes):  # half-precision arrays: the kernel runs on float32 stand-ins
            self.fn = widen_forward(_xp(ctx), self.fn, self.asynchronous, prop.mutate_inputs())
        requests = prop.resources(is_train)
        self.resources = [ResourceManager.get().request(ctx, r) for r in requests] if requests else ()
        self.res_vars = [r.var for r in self.resources]
        self.mutate_inputs = prop.mutate_inputs()
        self.req = _WRITE1
        self._push_kernel = _engine().push_kernel  # the process-wide engine outlives every plan (a fork keeps it)
        #: nothing written but the outputs (no resources, no in-place inputs)
        self.simple = not self.res_vars and not self.mutate_inputs
        # host ops get the same RunContext every time: those without resources share one OpContext
        self.op_ctx = OpContext(is_train, RunContext(ctx, None), ()) \
            if ctx.device_type == "cpu" and not self.resources else None

    def push_small(self, a, b, out) -> None:
        """``out = op(a)`` (``b`` None) or ``op(a, b)`` for a one-output, resource-free, sync op on small
        host arrays: the engine's fast path (``push_kernel``), the path the per-op budget is spent on."""
        if b is None:
            args, reads = [a._data], [a._chunk.var]
        else:
            va, vb = a._chunk.var, b._chunk.var
            args, reads = [a._data, b._data], [va, vb] if va is not vb else [va]
        self._push_kernel(self.fn, (self.op_ctx, args, _WRITE1, [out._data], ()), self.ctx, reads,
                          [out._chunk.var], self.name)

    def launch(self, args: list, outputs: list, aux: list = (), req: list | None = None,
               inline: bool | None = None) -> Launch:
        """The push computing ``outputs`` from ``args`` (and ``aux``) as ``req`` says (default: write)."""
        reads, writes = self._vars(args, outputs, aux)
        in_raw, out_raw = [a._data for a in args], [o._data for o in outputs]
        req = req if req is not None else [WRITE_TO] * len(outputs)
        if any(map(_sparse, in_raw)) or any(map(_sparse, out_raw)):
            run = self._sparse_run(in_raw, out_raw, [a._data for a in aux], req)
            return Launch(self.name, run, reads, writes, False, inline)
        aux_raw = [a._data for a in aux]
        fn = self.fn
        if widens(self.prop, self.ctx, [r.dtype for r in (*in_raw, *out_raw, *aux_raw)]):
            fn = widen_forward(_xp(self.ctx), fn, self.asynchronous, self.mutate_inputs)
        run = self._dense_run(in_raw, req, out_raw, aux_raw, fn)
        return Launch(self.name, run, reads, writes, self.asynchronous, inline)

    def push_dense(self, args: list, outputs: list, aux: list, inline: bool | None) -> None:
        """:meth:`launch` and push, for a call known to be dense (an imperative call's cached plan):
        no storage-type checks and no Launch object on this per-call path."""
        reads, writes = self._vars(args, outputs, aux)
        run = self._dense_run([a._data for a in args], self.req if len(outputs) == 1 else [WRITE_TO] * len(outputs),
                              [o._data for o in outputs], [a._data for a in aux] if aux else ())
        if self.asynchronous:
            _engine().push_async(run, self.ctx, reads, writes, name=self.name)
        else:
            _engine().push_sync(run, self.ctx, reads, writes, name=self.name, inline=inline)

    def _vars(self, args, outputs, aux) -> tuple[list, list]:
        """The vars read and written: outputs, aux states, in-place inputs and resources written."""
        if len(outputs) == 1 and not aux and self.simple:  # the common case: nothing to de-duplicate
            out = outputs[0]._chunk.var
            return [v for v in (a._chunk.var for a in args) if v is not out], [out]
        writes = [o._chunk.var for o in outputs] + [a._chunk.var for a in aux]
        if self.mutate_inputs:
            writes += [args[i]._chunk.var for i in self.mutate_inputs]
        return _dedupe([a._chunk.var for a in args], writes + self.res_vars)

    def _dense_run(self, in_raw, req, out_raw, aux_raw, fn=None):
        is_train, res, fn = self.is_train, self.resources, fn or self.fn
        if self.asynchronous:
            def run(rctx, on_complete):
                fn(OpContext(is_train, rctx, res), in_raw, req, out_raw, aux_raw, on_complete)
        else:
            def run(rctx):
                fn(OpContext(is_train, rctx, res), in_raw, req, out_raw, aux_raw)
        return run

    def _sparse_run(self, in_raw, out_raw, aux_raw, req):
        """The op's sparse kernel, or its dense one on dense copies (MXNet's storage fallback)."""
        prop, ctx, is_train, res = self.prop, self.ctx, self.is_train, self.resources
        stype = [r.stype if _sparse(r) else DEFAULT for r in in_raw]
        plan = plan_for(prop, ctx, stype, [r.shape for r in in_raw], [r.dtype for r in in_raw],
                        out_stypes=[r.stype if _sparse(r) else DEFAULT for r in out_raw])
        out_st = list(plan.out_stypes)
        xp = _xp(ctx)

        def run(rctx):
            vals = execute(plan, xp, OpContext(is_train, rctx, res), [value_of(r) for r in in_raw],
                           [_dense_aux(xp, a) for a in aux_raw], out_st, out_raw)
            for raw, r, v in zip(out_raw, req, vals, strict=False):
                store(xp, raw, r, v)

        return run


_WRITE1 = [WRITE_TO]


_DEPS: dict = {}
_PLACEHOLDERS: dict = {}
_CACHE_MAX = 4096


def backward_deps(prop, n_in: int, n_out: int) -> frozenset:
    """What ``prop``'s backward reads, as ``("og"|"in"|"out", k)`` tokens (its declared dependency;
    cached: props are shared per op and params)."""
    key = (prop, n_in, n_out)
    deps = _DEPS.get(key)
    if deps is None:
        deps = frozenset(prop.declare_backward_dependency([("og", k) for k in range(n_out)],
                                                          [("in", k) for k in range(n_in)],
                                                          [("out", k) for k in range(n_out)]))
        if len(_DEPS) >= _CACHE_MAX:
            _DEPS.clear()
        _DEPS[key] = deps
    return deps


def _placeholder(xp, shape, dtype):
    """``placeholder(...)``, cached: a read-only broadcast view, safe to share."""
    key = (xp, shape, dtype)
    arr = _PLACEHOLDERS.get(key)
    if arr is None:
        if len(_PLACEHOLDERS) >= _CACHE_MAX:
            _PLACEHOLDERS.clear()
        arr = _PLACEHOLDERS[key] = placeholder(xp, shape, dtype)
    return arr


class BackwardPlan:
    """An op's backward on ``ctx``: kernel, resources, what it reads, whether it is asynchronous.
    ``BackwardPlan.of(...)`` returns a cached one."""

    _cache: dict = {}

    @classmethod
    def of(cls, prop, ctx, is_train: bool, n_in: int, n_out: int) -> BackwardPlan:
        key = (prop, ctx, is_train, n_in, n_out)
        plan = cls._cache.get(key)
        if plan is None:
            if len(cls._cache) >= _CACHE_MAX:
                cls._cache.clear()
            plan = cls._cache[key] = cls(prop, ctx, is_train, n_in, n_out)
        return plan

    __slots__ = ("prop", "ctx", "is_train", "name", "deps", "asynchronous", "resources", "res_vars")

    def __init__(self, prop, ctx, is_train: bool, n_in: int, n_out: int, name: str | None = None):
        self.prop, self.ctx, self.is_train = prop, ctx, is_train
        self.name = name or f"{prop.op_name}_backward"
        self.deps = backward_deps(prop, n_in, n_out)
        self.asynchronous = prop.asynchronous(is_train)
        self.resources = [ResourceManager.get().request(ctx, r) for r in prop.backward_resource()]
        self.res_vars = [r.var for r in self.resources]

    def launch(self, out_grads: list, args: list, outputs: list, aux: list, in_grads: list, req: list,
               inline: bool | None = None) -> Launch:
        """The push writing ``in_grads`` (None: not wanted) from ``out_grads`` (None: not read, or
        zero for a sparse kernel) and what the op's backward declared it reads of ``args`` and ``outputs``.
        ``req`` holds one request per input; it is NULL wherever ``in_grads`` is None."""
        raws = [g._data for g in out_grads if g is not None] + [a._data for a in args] + \
            [o._data for o in outputs] + [g._data for g in in_grads if g is not None]
        if any(map(_sparse, raws)):
            return self._sparse_launch(out_grads, args, outputs, aux, in_grads, req, inline)
        xp = _xp(self.ctx)
        deps, reads = self.deps, []

        def pick(tag, k, arr):
            if (tag, k) in deps:
                reads.append(arr._chunk.var)
                return arr._data
            return _placeholder(xp, arr.shape, arr._data.dtype)

        out_grad = []
        for k, g in enumerate(out_grads):
            if g is None and ("og", k) in deps:
                raise ValueError(f"{self.prop.label}: its backward reads output gradient {k}; the caller "
                                 "must pass one (zeros when no gradient reached that output)")
            out_grad.append(pick("og", k, g if g is not None else outputs[k]))
        in_data = [pick("in", k, a) for k, a in enumerate(args)]
        out_data = [pick("out", k, o) for k, o in enumerate(outputs)]
        aux_data = [a._data for a in aux]
        in_grad, writes = [], []
        for k, g in enumerate(in_grads):
            if g is None:
                in_grad.append(_placeholder(xp, args[k].shape, args[k]._data.dtype))
            else:
                in_grad.append(g._data)
                writes.append(g._chunk.var)
        req = [r if g is not None else NULL for r, g in zip(req, in_grads, strict=True)]
        # SyncBatchNorm updates its moving statistics in backward, as MXNet's does
        (writes if self.prop.backward_writes_aux else reads).extend(a._chunk.var for a in aux)
        reads, writes = _dedupe(reads, writes + self.res_vars)
        is_train, res = self.is_train, self.resources
        widen = widens(self.prop, self.ctx, [r.dtype for r in raws] + [a.dtype for a in aux_data])
        if self.asynchronous:  # done when it calls on_complete (SyncBatchNorm over devices)
            fn = self.prop.backward_async_fn(self.ctx)
            fn = widen_backward(xp, fn, True) if widen else fn

            def run(rctx, on_complete):
                fn(OpContext(is_train, rctx, res), out_grad, in_data, out_data, req, in_grad, aux_data, on_complete)
        else:
            fn = self.prop.backward_fn(self.ctx)
            fn = widen_backward(xp, fn) if widen else fn

            def run(rctx):
                fn(OpContext(is_train, rctx, res), out_grad, in_data, out_data, req, in_grad, aux_data)
        return Launch(self.name, run, reads, writes, self.asynchronous, inline)

    def _sparse_launch(self, out_grads, args, outputs, aux, in_grads, req, inline) -> Launch:
        """Backward with csr / row_sparse arrays: the op's sparse backward when it has one for these
        storage types (the gradients then keep their targets' storage types), else its dense
        backward on dense copies.  Every input, output and output gradient is read."""
        prop, ctx, is_train, res = self.prop, self.ctx, self.is_train, self.resources
        xp = _xp(ctx)
        og_raw = [g._data if g is not None else None for g in out_grads]
        og_like = [(o.shape, o._data.dtype) for o in outputs]
        in_raw, out_raw = [a._data for a in args], [o._data for o in outputs]
        aux_raw = [a._data for a in aux]
        g_raw = [g._data if g is not None else None for g in in_grads]
        req = [r if g is not None else NULL for r, g in zip(req, in_grads, strict=True)]
        wanted = [(r.stype if _sparse(r) else DEFAULT) if r is not None else None for r in g_raw]
        kernel, binfer = prop.sparse_backward, prop.sparse_backward_infer
        offered = binfer(prop, [r.stype if _sparse(r) else DEFAULT for r in in_raw],
                         [r.stype if _sparse(r) else DEFAULT for r in out_raw]) \
            if kernel is not None and binfer is not None else None
        use_kernel = offered is not None and all(w is None or w == DEFAULT or w == v
                                                 for w, v in zip(wanted, offered, strict=False))

        def run(rctx):
            op_ctx = OpContext(is_train, rctx, res)
            ogs = [value_of(r) if r is not None else xp.zeros(s, d) for r, (s, d) in zip(og_raw, og_like, strict=True)]
            ins, outv = [value_of(r) for r in in_raw], [value_of(r) for r in out_raw]
            if use_kernel:
                grads = kernel(xp, prop, op_ctx, ogs, ins, outv, wanted)
                for gr, raw, r in zip(grads, g_raw, req, strict=False):
                    if r == NULL:
                        continue
                    if gr is None:
                        if r != ADD_TO:
                            store(xp, raw, WRITE_TO, xp.zeros(raw.shape, raw.dtype))
                        continue
                    store(xp, raw, r, gr)
                return
            targets = [r if r is not None else xp.zeros(a.shape, a.dtype) for r, a in zip(g_raw, in_raw, strict=True)]
            # (a SparseStore has shape and dtype too: a dense zero stands in for a gradient nobody wants)
            dense_backward(prop, ctx, xp, op_ctx, ogs, ins, outv, req, targets, [_dense_aux(xp, a) for a in aux_raw])

        reads = [g._chunk.var for g in out_grads if g is not None] + [a._chunk.var for a in args] + \
            [o._chunk.var for o in outputs] + [a._chunk.var for a in aux]
        writes = [g._chunk.var for g in in_grads if g is not None]
        reads, writes = _dedupe(reads, writes + self.res_vars)
        return Launch(self.name, run, reads, writes, False, inline)


def _dense_aux(xp, raw):
    """Aux states are dense to the kernels (MXNet keeps them dense too)."""
    return raw if not _sparse(raw) else st.cast_value(xp, raw.value, DEFAULT)


def accumulate(target, terms: list, req, ctx, name: str = "_grad_sum", inline: bool | None = None) -> Launch:
    """The push storing ``sum(terms)`` into ``target`` as ``req`` says: overwrite (no terms: zeros),
    add to it, or nothing.  Sparse terms or target keep the target's storage type."""
    dst, srcs = target._data, [t._data for t in terms]
    reads, writes = _dedupe([t._chunk.var for t in terms], [target._chunk.var])
    xp = _xp(ctx)
    if _sparse(dst) or any(map(_sparse, srcs)):
        run = _sparse_sum(xp, dst, srcs, req)
    else:
        add = xp.add

        def run(rctx):
            if req == NULL:
                return
            if req == ADD_TO:
                for s in srcs:
                    add(dst, s, out=dst)
            elif not srcs:
                dst[...] = 0
            elif len(srcs) == 1:
                if srcs[0] is not dst:
                    dst[...] = srcs[0]
            else:
                add(srcs[0], srcs[1], out=dst)
                for s in srcs[2:]:
                    add(dst, s, out=dst)
    return Launch(name, run, reads, writes, False, inline)


def _sparse_sum(xp, dst, srcs: list, req):
    own = [s for s in srcs if s is not dst]
    add = req == ADD_TO or len(own) < len(srcs)  # the target is one of the terms: it holds that one already

    def run(rctx):
        if req == NULL:
            return
        if not own:
            if not add:
                store(xp, dst, WRITE_TO, xp.zeros(dst.shape, dst.dtype))
            return
        total = value_of(own[0])
        for s in own[1:]:
            total = add_values(xp, total if isinstance(total, st.SparseValue) else st.cast_value(xp, total, DEFAULT),
                               value_of(s))
        store(xp, dst, ADD_TO if add else WRITE_TO, total)

    return run


def host_context(is_train: bool = False) -> OpContext:
    """The OpContext of a kernel called on host arrays outside the engine (a rule probing an op's
    value at zero, say): no stream, no resources."""
    return OpContext(is_train, RunContext(_CPU0, None), ())


def launch_inline(ctx, size: int) -> bool:
    """Whether an op writing ``size`` elements on ``ctx`` runs in the pushing thread (see INLINE_ELEMENTS)."""
    return size < INLINE_ELEMENTS and ctx.device_type == "cpu"


on_switch(_forget_backends)
