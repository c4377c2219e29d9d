"""Imperative op calls: ``mx.nd.<op>(...)`` becomes one engine push.

Shape and type errors are raised here, at the call (eagerly); the computation
itself runs on the engine, and its errors surface at the next sync point.
"""

from __future__ import annotations

from ..base import MXAsyncError
from ..operator import WRITE_TO, OpContext
from ..operator.registry import get_op
from ..runtime.engine import Engine
from ..runtime.resource import ResourceManager

__all__ = ["invoke", "INLINE_ELEMENTS"]

# Ops on fewer elements than this run in the pushing thread (see docs/performance.md:
# below ~100k float32 elements an op costs less than the parallelism a worker buys back).
INLINE_ELEMENTS = 65536

_engine = Engine.get


def invoke(op_name: str, inputs: list, out=None, is_train: bool = False, **params):
    """Run op ``op_name`` on NDArrays ``inputs``; returns the output NDArray(s).

    ``out`` (an NDArray or a list) receives the results instead of new arrays.
    """
    from .ndarray import NDArray, _empty

    opdef = get_op(op_name)
    prop = opdef.prepare(**params)
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise MXAsyncError(f"{prop.label}: input {i} must be an NDArray, got {type(x).__name__}")
    ctx = inputs[0]._ctx if inputs else params.get("ctx") or _default_ctx()
    n_args = len(prop.list_arguments()) if not opdef.key_var_num_args else len(inputs)
    args, aux = inputs[:n_args], inputs[n_args:]
    in_shapes = [x.shape for x in args]
    _, out_shapes, _ = prop.infer_shape(in_shapes)
    _, out_types, _ = prop.infer_type([x.dtype for x in args])
    nout = prop.num_outputs()
    if out is None:
        outputs = [_empty(s, t, ctx) for s, t in zip(out_shapes, out_types, strict=True)]
    else:
        outputs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outputs) != nout:
            raise MXAsyncError(f"{prop.label}: out= needs {nout} arrays, got {len(outputs)}")
        for o, s in zip(outputs, out_shapes, strict=True):
            if tuple(o.shape) != tuple(s):
                raise MXAsyncError(f"{prop.label}: out= has shape {o.shape} but the result has shape {s}")
    fwd = prop.forward_fn(ctx)
    requests = prop.resources(is_train)
    resources = [ResourceManager.get().request(ctx, r) for r in requests] if requests else ()
    in_data = [x._data for x in args]
    aux_data = [x._data for x in aux]
    out_data = [o._data for o in outputs]
    req = [WRITE_TO] * nout
    const_vars = [x._chunk.var for x in args]
    mutate_vars = [o._chunk.var for o in outputs] + [x._chunk.var for x in aux]
    for i in prop.mutate_inputs():
        mutate_vars.append(args[i]._chunk.var)
    mutate_vars += [r.var for r in resources]

    def run(rctx):
        fwd(OpContext(is_train, rctx, resources), in_data, req, out_data, aux_data)

    size = outputs[0]._data.size if outputs else 0
    _engine().push_sync(run, ctx, const_vars, mutate_vars, name=opdef.name,
                        inline=size < INLINE_ELEMENTS and ctx.device_type == "cpu")
    visible = prop.num_visible_outputs()
    if out is not None:
        return out
    return outputs[0] if visible == 1 else outputs[:visible]


def _default_ctx():
    from ..runtime.context import current_context

    return current_context()
