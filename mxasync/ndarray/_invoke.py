"""Imperative op calls: ``mx.nd.<op>(...)`` becomes one engine push.

Shape and type errors are raised here, at the call (eagerly); the computation
itself runs on the engine, and its errors surface at the next sync point.

Everything that depends only on the op, its params, the input shapes and
dtypes and the context (output shapes and types, the forward function, the
resources, where the op runs) is computed once into a :class:`_Plan` and
cached, so a repeated call pays for allocation and the push only.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from .. import _seams
from ..backends import get_backend, on_switch
from ..base import MXAsyncError
from ..operator import OpContext
from ..operator.base import WRITE_TO
from ..operator.registry import get_op
from ..operator.sparse.storage import SparseStore
from ..runtime.context import current_context, mixable
from ..runtime.engine import Engine
from ..runtime.resource import ResourceManager
from ..runtime.run_context import RunContext
from ..runtime.storage import Storage
from . import _recording as _ag
from ._chunk import Chunk

__all__ = ["invoke", "INLINE_ELEMENTS"]

# Ops on fewer elements than this run in the pushing thread (docs/performance.md:
# below ~100k float32 elements an op costs less than the parallelism a worker buys back).
INLINE_ELEMENTS = 65536

_engine = Engine.get
_PLANS: dict = {}
_PLANS_MAX = 4096


class _Plan:
    __slots__ = ("name", "label", "out_shapes", "out_types", "fwd", "resources", "nout", "visible", "n_args",
                 "mutate_inputs", "inline", "req", "ctx", "simple", "small", "xp", "op_ctx", "asynchronous")

    def __init__(self, opdef, prop, args, ctx, is_train, out_shapes=None):
        self.name = opdef.name
        self.label = prop.label
        self.ctx = ctx
        self.out_shapes = out_shapes or prop.infer_shape([x.shape for x in args])[1]
        _, self.out_types, _ = prop.infer_type([x.dtype for x in args])
        if any(s is None for s in self.out_shapes):
            raise MXAsyncError(f"{prop.label}: cannot infer the output shape from inputs "
                               f"{[x.shape for x in args]}")
        self.fwd = prop.forward_fn(ctx)
        # done when it calls on_complete (SyncBatchNorm meeting its other devices): pushed with push_async
        self.asynchronous = prop.asynchronous(is_train)
        if self.asynchronous:
            self.fwd = prop.forward_async_fn(ctx)
        requests = prop.resources(is_train)
        self.resources = [ResourceManager.get().request(ctx, r) for r in requests] if requests else ()
        self.nout = prop.num_outputs()
        self.visible = prop.num_visible_outputs()
        self.n_args = len(args)
        self.mutate_inputs = prop.mutate_inputs()
        size = 1
        for s in self.out_shapes[0] if self.out_shapes else ():
            size *= s
        self.inline = size < INLINE_ELEMENTS and ctx.device_type == "cpu"
        self.req = [WRITE_TO] * self.nout
        # one output, no aux, resources or in-place inputs: the common case gets a short path
        self.simple = self.nout == 1 and not self.resources and not self.mutate_inputs and not self.asynchronous
        self.xp = _xp(ctx)
        # small CPU outputs are plain numpy arrays (see chunk.py); others go through the pool
        largest = max((_nbytes(sh, t) for sh, t in zip(self.out_shapes, self.out_types, strict=True)), default=0)
        self.small = self.xp is np and largest < Storage.get(ctx).min_pooled
        # CPU ops get the same RunContext every time, so small ones can share one OpContext
        self.op_ctx = OpContext(is_train, RunContext(ctx, None), ()) if self.small and not self.resources else None


def _nbytes(shape, dtype) -> int:
    n = np.dtype(dtype).itemsize
    for d in shape:
        n *= d
    return n


def _alloc(plan: _Plan, i: int, ctx):
    """Output ``i`` of ``plan``: a plain numpy array when small (see chunk.py), else from the pool."""
    if plan.small:
        data = np.empty(plan.out_shapes[i], plan.out_types[i])
        return NDArray(Chunk(data, ctx), data)
    return _empty(plan.out_shapes[i], plan.out_types[i], ctx, op_output=True)


def _plan(opdef, prop, args, ctx, is_train) -> _Plan:
    if prop.shape_from_values is not None:  # the output shape depends on the values: wait, ask, never cache
        prop.infer_shape([x.shape for x in args])  # the shape checks still raise at the call
        for x in args:
            x.wait_to_read()
        shapes = [tuple(s) for s in prop.shape_from_values(prop, [x._data for x in args])]
        return _Plan(opdef, prop, args, ctx, is_train, shapes)
    if len(args) == 2:
        a, b = args[0]._data, args[1]._data
        key = (prop, is_train, ctx, a.shape, a.dtype, b.shape, b.dtype)
    elif len(args) == 1:
        a = args[0]._data
        key = (prop, is_train, ctx, a.shape, a.dtype)
    else:
        key = (prop, is_train, ctx, tuple((x._data.shape, x._data.dtype) for x in args))
    plan = _PLANS.get(key)
    if plan is None:
        plan = _Plan(opdef, prop, args, ctx, is_train)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def invoke(op_name: str, inputs: list, out=None, is_train: bool = False, **params):
    """Run op ``op_name`` on NDArrays ``inputs``; returns the output NDArray(s).

    ``out`` (an NDArray or a list) receives the results instead of new arrays.
    """
    opdef = _OPDEFS.get(op_name) or _opdef(op_name)
    ctx = params.pop("ctx", None) if params else None
    prop = opdef.prepare(**params) if params else opdef.prepare()
    rec = False
    if _ag.active:  # inside autograd.record()/train_mode() on some thread: the only cost otherwise
        t = _ag._tls
        is_train = is_train or t.training
        rec = t.recording
        if rec and out is not None:
            _ag.check_out(prop, out)
    for x in inputs:
        if getattr(x, "_data", None).__class__ is SparseStore:
            return _sparse_call(opdef, prop, inputs, out, is_train, ctx, rec)
    if (out is not None and _sparse_out(out)) or (
            getattr(prop, "sparse_from_dense", False) and prop.infer_storage_type(["default"] * len(inputs))[1]
            != ["default"] * prop.num_outputs()):
        return _sparse_call(opdef, prop, inputs, out, is_train, ctx, rec)
    try:
        ctx = inputs[0]._ctx if inputs else (ctx or current_context())
        n_args = len(inputs) if opdef.key_var_num_args else len(prop.arguments)
        args, aux = (inputs, ()) if len(inputs) <= n_args else (inputs[:n_args], inputs[n_args:])
        plan = _plan(opdef, prop, args, ctx, is_train)
    except AttributeError:
        bad = next(i for i, x in enumerate(inputs) if not isinstance(x, NDArray))
        raise MXAsyncError(f"{prop.label}: input {bad} must be an NDArray, "
                           f"got {type(inputs[bad]).__name__}") from None
    for x in inputs:
        # host contexts (cpu(0), cpu(1), pinned, shared) share memory: MXNet mixes them, the result
        # living on the first input's context; device memory (gpu, a plugin's) must be copied first
        if x._ctx is not ctx and not mixable(x._ctx, ctx):
            raise MXAsyncError(f"{prop.label}: inputs live on different contexts ({ctx} and {x._ctx}); "
                               "copy them with as_in_context first")
    if plan.op_ctx is not None and plan.simple and not aux and out is None and n_args == 2 and len(args) == 2:
        result = _binary_small(plan, args[0], args[1], ctx, is_train)
        if type(args[0]) is not NDArray:  # an mx.np array in: its class out (NumPy-interface code on legacy ops)
            result.__class__ = type(args[0])
        if rec:
            _RECORDER.impl.record_op(prop, ctx, args, aux, [result], is_train)
        return result
    fwd, req, resources = plan.fwd, plan.req, plan.resources
    in_data = list(map(_DATA, args))
    if out is None:
        outputs = [_alloc(plan, 0, ctx)] if plan.nout == 1 else [_alloc(plan, i, ctx) for i in range(plan.nout)]
    else:
        outputs = list(out) if isinstance(out, (list, tuple)) else [out]
        _check_out(plan, outputs)
    out_data = [o._data for o in outputs]
    aux_data = [x._data for x in aux]
    if plan.simple and not aux:  # one output and nothing else written: no de-duplication needed
        out_var = outputs[0]._chunk.var
        mutate_vars = [out_var]
        const_vars = [v for v in map(_VAR, args) if v is not out_var]
    else:
        mutate_vars = list(dict.fromkeys(
            [o._chunk.var for o in outputs] + [x._chunk.var for x in aux]
            + [args[i]._chunk.var for i in plan.mutate_inputs] + [r.var for r in resources]))
        const_vars = [v for v in map(_VAR, args) if v not in mutate_vars]

    if plan.asynchronous:
        def run_async(rctx, on_complete):
            fwd(OpContext(is_train, rctx, resources), in_data, req, out_data, aux_data, on_complete)

        _engine().push_async(run_async, ctx, const_vars, mutate_vars, name=plan.name)
    else:
        def run(rctx):
            fwd(OpContext(is_train, rctx, resources), in_data, req, out_data, aux_data)

        _engine().push_sync(run, ctx, const_vars, mutate_vars, name=plan.name, inline=plan.inline)
    if inputs and type(inputs[0]) is not NDArray:  # an mx.np array in: its class out
        for o in outputs:
            o.__class__ = type(inputs[0])
    if rec:
        _RECORDER.impl.record_op(prop, ctx, args, aux, outputs, is_train)
    if out is not None:
        return out
    return outputs[0] if plan.visible == 1 else outputs[:plan.visible]


def _sparse_out(out) -> bool:
    outs = out if isinstance(out, (list, tuple)) else [out]
    return any(o._data.__class__ is SparseStore for o in outs)


def _sparse_call(opdef, prop, inputs, out, is_train, ctx, rec):
    """A call with sparse storage involved (ndarray/_sparse_invoke.py)."""
    from ._sparse_invoke import invoke_sparse

    ctx = inputs[0]._ctx if inputs else (ctx or current_context())
    return invoke_sparse(opdef, prop, inputs, out, is_train, ctx, rec, _RECORDER.impl if rec else None)


_OPDEFS: dict = {}
_DATA = attrgetter("_data")
_VAR = attrgetter("_chunk.var")


def _opdef(name: str):
    opdef = _OPDEFS[name] = get_op(name)
    return opdef


_BINARY_PLANS: dict = {}


def invoke_binary(op_name: str, a, b):
    """``invoke(op_name, [a, b])`` for the Python operators on NDArrays (``a + b``, ``a * b``...).

    Keyed on the op name and the inputs' shapes, dtypes and context, a hit goes
    straight to allocation and the push; anything unusual (autograd too) takes :func:`invoke`.
    """
    if _ag.active or b._data.__class__ is SparseStore:
        return invoke(op_name, [a, b])
    ad, bd, ctx = a._data, b._data, a._ctx
    key = (op_name, ctx, ad.shape, ad.dtype, bd.shape, bd.dtype)
    plan = _BINARY_PLANS.get(key)
    if plan is None or b._ctx is not ctx:
        if b._ctx is not ctx or len(_BINARY_PLANS) >= _PLANS_MAX:
            return invoke(op_name, [a, b])
        opdef = _OPDEFS.get(op_name) or _opdef(op_name)
        plan = _plan(opdef, opdef.prepare(), [a, b], ctx, False)
        if plan.op_ctx is None or not plan.simple:
            return invoke(op_name, [a, b])
        _BINARY_PLANS[key] = plan
    return _binary_small(plan, a, b, ctx, False)


_SCALAR_PLANS: dict = {}


def _drop_plans() -> None:
    """Another backend serves a device type now (``mx.backends.use``): plans hold the old one's kernels."""
    _PLANS.clear()
    _BINARY_PLANS.clear()
    _SCALAR_PLANS.clear()


on_switch(_drop_plans)


def invoke_scalar(op_name: str, a, scalar: float):
    """``invoke(op_name, [a], scalar=scalar)`` for ``a * 2`` and friends: a plan cached per op,
    scalar, shape, dtype and context, then the same short path as :func:`invoke_binary`."""
    if _ag.active or scalar != scalar or a._data.__class__ is SparseStore:  # recording, a NaN scalar, sparse
        return invoke(op_name, [a], scalar=scalar)
    ad, ctx = a._data, a._ctx
    key = (op_name, scalar, ctx, ad.shape, ad.dtype)
    plan = _SCALAR_PLANS.get(key)
    if plan is None:
        if len(_SCALAR_PLANS) >= _PLANS_MAX:
            _SCALAR_PLANS.clear()
        opdef = _OPDEFS.get(op_name) or _opdef(op_name)
        plan = _plan(opdef, opdef.prepare(scalar=scalar), [a], ctx, False)
        if plan.op_ctx is None or not plan.simple:
            return invoke(op_name, [a], scalar=scalar)
        _SCALAR_PLANS[key] = plan
    result = _alloc(plan, 0, ctx)
    _engine().push_kernel(plan.fwd, (plan.op_ctx, [ad], plan.req, [result._data], ()), ctx,
                          [a._chunk.var], [result._chunk.var], plan.name)
    return result


def _binary_small(plan: _Plan, a, b, ctx, is_train: bool):
    """``c = a + b`` and friends on small CPU arrays: the path the per-op budget is spent on."""
    result = _alloc(plan, 0, ctx)
    va, vb = a._chunk.var, b._chunk.var
    _engine().push_kernel(plan.fwd, (plan.op_ctx, [a._data, b._data], plan.req, [result._data], ()), ctx,
                          [va, vb] if va is not vb else [va], [result._chunk.var], plan.name)
    return result


def _check_out(plan: _Plan, outputs: list) -> None:
    if len(outputs) != plan.nout:
        raise MXAsyncError(f"{plan.label}: out= needs {plan.nout} arrays, got {len(outputs)}")
    for o, s in zip(outputs, plan.out_shapes, strict=True):
        if o.shape != tuple(s):
            raise MXAsyncError(f"{plan.label}: out= has shape {o.shape} but the result has shape {tuple(s)}")


def _xp(ctx):
    return get_backend(ctx.device_type).xp


# while recording (``_ag.active`` and this thread's flag), op calls go to autograd's recorder; turning
# recording on installed it (see _recording.py)
_RECORDER = _seams.recorder

# ndarray.py imports this module at its end, once NDArray exists; the other way round, this import
# comes after every name here is defined, so it works whichever module loads first
from .ndarray import NDArray, _empty  # noqa: E402
