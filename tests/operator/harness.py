"""Drive a registered op on raw numpy arrays, as the NDArray/Executor layers will."""

from __future__ import annotations

import numpy as np

import mxasync as mx
from mxasync.operator import OpContext, get_op
from mxasync.operator.base import ADD_TO, NULL, WRITE_INPLACE, WRITE_TO

CPU = mx.cpu()

# Tolerances, per dtype, in ONE place (MXNet's assert_almost_equal defaults for float32).
TOL = {
    np.dtype("float16"): dict(rtol=1e-2, atol=1e-2),
    np.dtype("float32"): dict(rtol=1e-4, atol=1e-3),
    np.dtype("float64"): dict(rtol=1e-7, atol=1e-8),
}
GRAD_TOL = dict(rtol=1e-4, atol=1e-5)  # central differences in float64
GRAD_EPS = 1e-6


def tol(dtype) -> dict:
    return TOL.get(np.dtype(dtype), dict(rtol=0, atol=0))


def requested(prop, ctx, is_train: bool, backward: bool = False) -> list:
    from mxasync.runtime.resource import ResourceManager

    reqs = prop.backward_resource() if backward else prop.resources(is_train)
    return [ResourceManager.get().request(ctx, r) for r in reqs]


def prepare(op: str, params: dict):
    return get_op(op).prepare(**params)


def alloc_outputs(prop, inputs, aux, ctx=CPU, fill=None):
    _, out_shapes, aux_shapes = prop.infer_shape([x.shape for x in inputs])
    if prop.shape_from_values is not None:  # the output shape depends on the input values
        out_shapes = prop.shape_from_values(prop, inputs)
    _, out_types, _ = prop.infer_type([x.dtype for x in inputs])
    outs = []
    for s, t in zip(out_shapes, out_types, strict=False):
        o = np.empty(s, dtype=t or inputs[0].dtype)
        o[...] = np.nan if fill is None and o.dtype.kind == "f" else (fill or 0)
        outs.append(o)
    return outs


def forward(op: str, params: dict, inputs, aux=(), req=WRITE_TO, is_train=False, outs=None, ctx=CPU):
    prop = prepare(op, params)
    inputs = list(inputs)
    aux = list(aux)
    if outs is None:
        outs = alloc_outputs(prop, inputs, aux)
    reqs = [req] * len(outs)
    op_ctx = OpContext(is_train, None, requested(prop, ctx, is_train))
    prop.forward_fn(ctx)(op_ctx, inputs, reqs, outs, aux)
    return outs


def backward(op: str, params: dict, inputs, outs, out_grads, aux=(), req=WRITE_TO, grads=None, ctx=CPU,
             is_train=True):
    prop = prepare(op, params)
    if grads is None:
        grads = [np.full_like(x, np.nan) for x in inputs]
    reqs = req if isinstance(req, list) else [req] * len(inputs)
    op_ctx = OpContext(is_train, None, requested(prop, ctx, is_train, backward=True))
    prop.backward_fn(ctx)(op_ctx, list(out_grads), list(inputs), list(outs), reqs, grads, list(aux))
    return grads


def numeric_grad(op, params, inputs, head, aux=(), wrt=None, is_train=True, eps=GRAD_EPS):
    """d(sum(out_k * head_k))/d input, by central differences (float64)."""
    grads = []
    # perturbed through reshape(-1), which must be a view: of a non-contiguous input it is a copy,
    # and the gradient silently came out zero
    inputs = [x if x.flags.c_contiguous else x.copy() for x in inputs]
    for i, x in enumerate(inputs):
        if wrt is not None and i not in wrt:
            grads.append(None)
            continue
        g = np.zeros(x.shape, x.dtype)
        flat = x.reshape(-1)
        gflat = g.reshape(-1)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + eps
            fp = _loss(op, params, inputs, head, aux, is_train)
            flat[j] = old - eps
            fm = _loss(op, params, inputs, head, aux, is_train)
            flat[j] = old
            gflat[j] = (fp - fm) / (2 * eps)
        grads.append(g)
    return grads


def _loss(op, params, inputs, head, aux, is_train):
    outs = forward(op, params, [x.copy() for x in inputs], [a.copy() for a in aux], is_train=is_train)
    return sum(float((o.astype(np.float64) * h).sum()) for o, h in zip(outs, head, strict=False))


__all__ = ["TOL", "tol", "forward", "backward", "numeric_grad", "prepare", "alloc_outputs", "CPU", "NULL",
           "WRITE_TO", "WRITE_INPLACE", "ADD_TO", "GRAD_TOL"]
