"""Imperative op calls: ``mx.nd.<op>(...)`` becomes one engine push.

Shape and type errors are raised here, at the call (eagerly); the computation
itself runs on the engine, and its errors surface at the next sync point.

Everything that depends only on the op, its params, the input shapes and
dtypes and the context (output shapes and types, the forward function, the
resources, where the op runs) is computed once into a :class:`_Plan` and
cached, so a repeated call pays for allocation and the push only.
"""

from __future__ import annotations

import numpy as np

from .. import _seams
from ..backends import on_switch
from ..base import MXAsyncError
from ..operator.registry import get_op
from ..operator.sparse.formats import DEFAULT, SparseStore
from ..operator.step import INLINE_ELEMENTS, ForwardPlan, launch_inline
from ..runtime.context import current_context, mixable
from ..runtime.storage import Storage
from . import _recording as _ag
from ._chunk import Chunk

__all__ = ["invoke", "INLINE_ELEMENTS"]

_PLANS: dict = {}
_PLANS_MAX = 4096


class _Plan:
    """A dense call's output shapes and types, how its outputs are allocated, and its
    :class:`~mxasync.operator.step.ForwardPlan` (``step``)."""

    __slots__ = ("name", "label", "out_shapes", "out_types", "nout", "visible", "inline", "fast", "small",
                 "step")

    def __init__(self, opdef, prop, args, ctx, is_train, out_shapes=None):
        self.name = opdef.name
        self.label = prop.label
        self.out_shapes = list(out_shapes or prop.infer_shape([x.shape for x in args])[1])
        if not is_train:  # what only a training forward keeps for backward is not allocated
            for i in prop.train_only_outputs():
                self.out_shapes[i] = (0,)
        _, self.out_types, _ = prop.infer_type([x.dtype for x in args])
        if any(s is None for s in self.out_shapes):
            raise MXAsyncError(f"{prop.label}: cannot infer the output shape from inputs "
                               f"{[x.shape for x in args]}")
        self.step = step = ForwardPlan(prop, ctx, is_train, opdef.name,
                                       dtypes=[*(x.dtype for x in args), *self.out_types])
        self.nout = prop.num_outputs()
        self.visible = prop.num_visible_outputs()
        size = 1
        for s in self.out_shapes[0] if self.out_shapes else ():
            size *= s
        self.inline = launch_inline(ctx, size)
        # small host outputs are plain numpy arrays (see _chunk.py); others go through the pool
        largest = max((_nbytes(sh, t) for sh, t in zip(self.out_shapes, self.out_types, strict=True)), default=0)
        self.small = ctx.device_type == "cpu" and largest < Storage.get(ctx).min_pooled
        # one small output and nothing else written: the engine's push_kernel path (ForwardPlan.push_small)
        self.fast = self.small and self.nout == 1 and step.op_ctx is not None and not step.mutate_inputs \
            and not step.asynchronous and prop.pure_kernel


def _nbytes(shape, dtype) -> int:
    n = np.dtype(dtype).itemsize
    for d in shape:
        n *= d
    return n


def _alloc(plan: _Plan, i: int, ctx):
    """Output ``i`` of ``plan``: a plain numpy array when small (see _chunk.py), else from the pool."""
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
    if _AMP.impl is not None:  # amp.init(): casts to the op's precision first (mxasync/contrib/amp)
        inputs, params = _AMP.impl.ndarray_inputs(opdef, inputs, params)
    ctx = params.pop("ctx", None) if params else None
    prop = opdef.prepare(**params) if params else opdef.prepare()
    rec = False
    if _ag.active:  # inside autograd.record()/train_mode() on some thread: the only cost otherwise
        t = _ag._tls
        is_train = is_train or t.training
        rec = t.recording
        if rec and out is not None:
            _ag.check_out(prop, out)
    sparse = _sparse_call(prop, inputs, out)
    try:
        ctx = inputs[0]._ctx if inputs else (ctx or current_context())
        n_args = len(inputs) if opdef.key_var_num_args else len(prop.arguments)
        args, aux = (inputs, ()) if len(inputs) <= n_args else (inputs[:n_args], inputs[n_args:])
        plan = None if sparse else _plan(opdef, prop, args, ctx, is_train)
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
    if plan is not None and plan.fast and not aux and out is None and 0 < len(args) <= 2:
        result = _alloc(plan, 0, ctx)
        plan.step.push_small(args[0], args[1] if len(args) == 2 else None, result)
        if type(args[0]) is not NDArray:  # an mx.np array in: its class out (NumPy-interface code on legacy ops)
            result.__class__ = type(args[0])
        if rec:
            _RECORDER.impl.record_op(prop, ctx, args, aux, [result], is_train)
        return result
    if out is not None:
        outputs = list(out) if isinstance(out, (list, tuple)) else [out]
        _check_out(prop, outputs, plan.out_shapes if plan is not None else _shapes(prop, args))
    elif plan is None:
        outputs = _sparse_outputs(prop, args, ctx)
    else:
        outputs = [_alloc(plan, 0, ctx)] if plan.nout == 1 else [_alloc(plan, i, ctx) for i in range(plan.nout)]
    if plan is not None:
        plan.step.push_dense(args, outputs, aux, plan.inline)
    else:
        ForwardPlan(prop, ctx, is_train, opdef.name).launch(args, outputs, aux).push(ctx)
    if plan is not None and inputs and type(inputs[0]) is not NDArray:  # an mx.np array in: its class out
        for o in outputs:
            o.__class__ = type(inputs[0])
    if rec:
        _RECORDER.impl.record_op(prop, ctx, args, aux, outputs, is_train)
    if out is not None:
        return out
    visible = plan.visible if plan is not None else prop.num_visible_outputs()
    return outputs[0] if visible == 1 else outputs[:visible]


def _sparse_call(prop, inputs, out) -> bool:
    """Whether csr / row_sparse storage is involved: an input or ``out`` is sparse, or the op
    makes sparse outputs from dense inputs (``cast_storage``, ``dot(forward_stype=)``)."""
    for x in inputs:
        if getattr(x, "_data", None).__class__ is SparseStore:
            return True
    if out is not None:
        outs = out if isinstance(out, (list, tuple)) else [out]
        if any(o._data.__class__ is SparseStore for o in outs):
            return True
    return prop.sparse_from_dense and \
        any(s != DEFAULT for s in prop.infer_storage_type([DEFAULT] * len(inputs))[1])


def _shapes(prop, args) -> list:
    shapes = prop.infer_shape([x.shape for x in args])[1]
    if any(s is None for s in shapes):
        raise MXAsyncError(f"{prop.label}: cannot infer the output shape from inputs {[x.shape for x in args]}")
    return shapes


def _sparse_outputs(prop, args, ctx) -> list:
    """New outputs of a sparse call, each in the storage type the op's rule gives it."""
    shapes = _shapes(prop, args)
    _, types, _ = prop.infer_type([x.dtype for x in args])
    _, stypes, _ = prop.infer_storage_type([x.stype for x in args])
    return [_empty(s, t, ctx) if st == DEFAULT else new_sparse(st, s, t, ctx)
            for s, t, st in zip(shapes, types, stypes, strict=True)]


_OPDEFS: dict = {}


def _opdef(name: str):
    opdef = _OPDEFS[name] = get_op(name)
    return opdef


_BINARY_PLANS: dict = {}


def invoke_binary(op_name: str, a, b):
    """``invoke(op_name, [a, b])`` for the Python operators on NDArrays (``a + b``, ``a * b``...).

    Keyed on the op name and the inputs' shapes, dtypes and context, a hit goes
    straight to allocation and the push; anything unusual (autograd too) takes :func:`invoke`.
    """
    if _ag.active or _AMP.impl is not None or b._data.__class__ is SparseStore:
        return invoke(op_name, [a, b])
    ad, bd, ctx = a._data, b._data, a._ctx
    key = (op_name, id(ctx), ad.shape, ad.dtype, bd.shape, bd.dtype)  # the plan keeps ctx alive: its id stays its own
    plan = _BINARY_PLANS.get(key)
    if plan is None or b._ctx is not ctx:
        if b._ctx is not ctx or len(_BINARY_PLANS) >= _PLANS_MAX:
            return invoke(op_name, [a, b])
        opdef = _OPDEFS.get(op_name) or _opdef(op_name)
        plan = _plan(opdef, opdef.prepare(), [a, b], ctx, False)
        if not plan.fast:
            return invoke(op_name, [a, b])
        _BINARY_PLANS[key] = plan
    result = _alloc(plan, 0, ctx)
    plan.step.push_small(a, b, result)
    return result


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
    if _ag.active or _AMP.impl is not None or scalar != scalar or a._data.__class__ is SparseStore:
        # recording, AMP, a NaN scalar, sparse: the general path
        return invoke(op_name, [a], scalar=scalar)
    ad, ctx = a._data, a._ctx
    key = (op_name, scalar, id(ctx), ad.shape, ad.dtype)  # the plan keeps ctx alive: its id stays its own
    plan = _SCALAR_PLANS.get(key)
    if plan is None:
        if len(_SCALAR_PLANS) >= _PLANS_MAX:
            _SCALAR_PLANS.clear()
        opdef = _OPDEFS.get(op_name) or _opdef(op_name)
        plan = _plan(opdef, opdef.prepare(scalar=scalar), [a], ctx, False)
        if not plan.fast:
            return invoke(op_name, [a], scalar=scalar)
        _SCALAR_PLANS[key] = plan
    result = _alloc(plan, 0, ctx)
    plan.step.push_small(a, None, result)
    return result


def _check_out(prop, outputs: list, shapes: list) -> None:
    if len(outputs) != len(shapes):
        raise MXAsyncError(f"{prop.label}: out= needs {len(shapes)} arrays, got {len(outputs)}")
    for o, s in zip(outputs, shapes, strict=True):
        if tuple(o.shape) != tuple(s):
            raise MXAsyncError(f"{prop.label}: out= has shape {o.shape} but the result has shape {tuple(s)}")


# while recording (``_ag.active`` and this thread's flag), op calls go to autograd's recorder; turning
# recording on installed it (see _recording.py)
_RECORDER = _seams.recorder
_AMP = _seams.amp_casts

# ndarray.py imports this module at its end, once NDArray exists; the other way round, this import
# comes after every name here is defined, so it works whichever module loads first
from ._sparse_array import new_sparse  # noqa: E402
from .ndarray import NDArray, _empty  # noqa: E402
