"""How an op runs on inputs of given storage types: its sparse kernel, or MXNet's storage fallback.

:func:`plan_for` asks the op's ``infer_storage_type``; when the op has a sparse kernel for the
inputs' storage types (``sparse_forward``, see :func:`~.storage.register_sparse`) it runs it,
otherwise the sparse inputs are made dense, the dense kernel runs, and the outputs are cast to
their storage types, after MXNet's storage-fallback warning (logged once per message; set
``MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0`` to silence it).  Imperative calls and bound executors
both run ops through :func:`execute`, on raw values (dense arrays and :class:`~.storage.SparseValue`).
"""

from __future__ import annotations

import logging
import os

from ...backends import on_switch
from ..base import ADD_TO, NULL, WRITE_TO, assign
from . import formats as st
from .formats import DEFAULT, SparseStore, SparseValue

__all__ = ["SparsePlan", "plan_for", "execute", "store", "dense_backward", "fallback_message"]

_log = logging.getLogger("mxasync")
_LOGGED: set = set()


def fallback_message(prop, in_stypes, out_stypes, dev: str) -> str:
    params = {k: v for k, v in prop.params.model_dump().items()} if hasattr(prop.params, "model_dump") else {}
    return ("\nStorage type fallback detected:\n"
            f"operator = {prop.op_name}\n"
            f"input storage types = [{', '.join(in_stypes)}, ]\n"
            f"output storage types = [{', '.join(out_stypes)}, ]\n"
            f"params = {params}\n"
            f"context.dev_mask = {dev}\n"
            "The operator with default storage type will be dispatched for execution. You're seeing this warning "
            "message because the operator above is unable to process the given ndarrays with specified storage "
            "types, context and parameter. Temporary dense ndarrays are generated in order to execute the operator. "
            "This does not affect the correctness of the programme. You can set environment variable "
            "MXNET_STORAGE_FALLBACK_LOG_VERBOSE to 0 to suppress this warning.")


def _warn_fallback(prop, in_stypes, out_stypes, dev: str) -> None:
    if os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1") in ("0", "false", "False"):
        return
    msg = fallback_message(prop, in_stypes, out_stypes, dev)
    if msg not in _LOGGED:
        _LOGGED.add(msg)
        _log.warning(msg)


class SparsePlan:
    """What one call needs: storage types in and out, shapes and types, and which kernel runs."""

    __slots__ = ("prop", "in_stypes", "out_stypes", "kernel", "fwd", "out_shapes", "out_types", "n_out")

    def __init__(self, prop, ctx, in_stypes, in_shapes, in_types, out_stypes=None):
        self.prop = prop
        self.in_stypes = list(in_stypes)
        inferred_in, inferred_out, _ = prop.infer_storage_type(list(in_stypes))
        kernel = prop.sparse_forward
        self.kernel = kernel if kernel is not None and list(inferred_in) == self.in_stypes else None
        self.out_stypes = list(out_stypes) if out_stypes is not None else list(inferred_out)
        _, self.out_shapes, _ = prop.infer_shape(list(in_shapes))
        _, self.out_types, _ = prop.infer_type(list(in_types))
        self.n_out = prop.num_outputs()
        self.fwd = prop.forward_fn(ctx)
        if self.kernel is None and any(s != DEFAULT for s in self.in_stypes):
            _warn_fallback(prop, self.in_stypes, [DEFAULT] * self.n_out, ctx.device_type)


_PLANS: dict = {}
_PLANS_MAX = 4096


def plan_for(prop, ctx, in_stypes, in_shapes, in_types, out_stypes=None) -> SparsePlan:
    """The plan of ``prop`` on inputs of these storage types, shapes and types (cached: a training loop
    calls an op on the same kinds of arrays every step, and the inference rules cost more than a
    small kernel)."""
    key = (prop, ctx, tuple(in_stypes), tuple(map(tuple, in_shapes)), tuple(in_types),
           None if out_stypes is None else tuple(out_stypes))
    plan = _PLANS.get(key)
    if plan is None:
        plan = SparsePlan(prop, ctx, in_stypes, in_shapes, in_types, out_stypes)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


on_switch(_PLANS.clear)  # a plan holds the kernel of the backend that served its device type


def value_of(raw):
    """A raw array's content: the SparseValue of a SparseStore, the dense array itself otherwise."""
    return raw.value if raw.__class__ is SparseStore else raw


def execute(plan: SparsePlan, xp, op_ctx, in_vals: list, aux: list, out_stypes: list, out_raw=None) -> list:
    """Run forward on raw values; returns the outputs, each in its storage type from ``out_stypes``.
    A kernel marked ``wants_out`` also gets the raw outputs (``out=``), to update a weight in place."""
    if plan.kernel is not None:
        if getattr(plan.kernel, "wants_out", False):
            res = plan.kernel(xp, plan.prop, op_ctx, list(in_vals), list(plan.out_stypes), out=out_raw)
        else:
            res = plan.kernel(xp, plan.prop, op_ctx, list(in_vals), list(plan.out_stypes))
        res = list(res) if isinstance(res, (list, tuple)) else [res]
    else:
        dense = [st.cast_value(xp, v, DEFAULT) for v in in_vals]
        res = [xp.empty(tuple(s), t) for s, t in zip(plan.out_shapes, plan.out_types, strict=True)]
        plan.fwd(op_ctx, dense, [WRITE_TO] * len(res), res, aux)
    return [st.cast_value(xp, r, s) for r, s in zip(res, out_stypes, strict=False)]


def add_values(xp, a, b):
    """``a + b`` for values of one storage type (the sum has that type)."""
    if not isinstance(a, SparseValue):
        return a + st.cast_value(xp, b, DEFAULT)
    b = st.cast_value(xp, b, a.stype)
    if a.stype == st.CSR:
        return st.from_scipy(xp, st.as_scipy(xp, a) + st.as_scipy(xp, b), a.dtype)
    from .kernels import rsp_union

    return rsp_union(xp, a, b, xp.add)


def store(xp, raw_out, req, value) -> None:
    """Write ``value`` into raw output ``raw_out`` (a dense array or a SparseStore) as ``req`` says."""
    if req == NULL:
        return
    if raw_out.__class__ is SparseStore:
        value = st.cast_value(xp, value, raw_out.stype)
        if req == ADD_TO:
            value = add_values(xp, raw_out.value, value)
        raw_out.set(value)
        return
    assign(raw_out, req, st.cast_value(xp, value, DEFAULT))


def dense_backward(prop, ctx, xp, op_ctx, out_grads, in_vals, out_vals, req, in_grads_raw, aux) -> None:
    """The op's dense backward on dense copies of sparse values; gradients are cast into the
    storage type of their targets (``in_grads_raw``: dense arrays or SparseStores)."""
    og = [st.cast_value(xp, v, DEFAULT) for v in out_grads]
    ins = [st.cast_value(xp, v, DEFAULT) for v in in_vals]
    outs = [st.cast_value(xp, v, DEFAULT) for v in out_vals]
    temps, treq = [], []
    for g, r in zip(in_grads_raw, req, strict=True):
        if g.__class__ is SparseStore:
            temps.append(xp.zeros(g.shape, g.dtype))
            treq.append(WRITE_TO if r != NULL else NULL)
        else:
            temps.append(g)
            treq.append(r)
    prop.backward_fn(ctx)(op_ctx, og, ins, outs, treq, temps, aux)
    for g, r, t in zip(in_grads_raw, req, temps, strict=True):
        if g.__class__ is SparseStore and r != NULL:
            store(xp, g, r, t)
