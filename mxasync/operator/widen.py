"""bfloat16 kernels computed in float32.

NumPy has no bfloat16 arithmetic of its own: ``ml_dtypes`` gives it ufunc loops, but its
reductions accumulate in bfloat16 (the sum of 1000 ones is 256) and its matmul is a slow generic
loop.  So an op that reads or writes bfloat16 runs its ordinary kernel on float32 copies: bfloat16
inputs, outputs and aux states become float32 for the kernel, and the results are rounded back to
bfloat16 (as oneDNN's bfloat16 kernels in MXNet accumulate in float32).  Arrays of other types pass
unchanged, so ``Cast`` / ``amp_cast`` from or to bfloat16 work through the same kernels.

:class:`~mxasync.operator.step.ForwardPlan` and ``BackwardPlan`` decide once per plan (the dtypes
are part of what a plan is cached on) whether to wrap the kernel with :func:`widen_forward` /
:func:`widen_backward`; the common float32 call pays nothing.
"""

from __future__ import annotations

import numpy as np

from .._bfloat16 import bfloat16
from ..backends import get_backend
from ..base import MXAsyncError
from .base import ADD_TO, NULL

__all__ = ["needs_widening", "check_bfloat16_backend", "widen_forward", "widen_backward"]

_F32 = np.dtype(np.float32)


def needs_widening(dtypes) -> bool:
    """Whether any of ``dtypes`` is bfloat16 (then the kernel runs on float32 copies)."""
    return any(d is not None and d == bfloat16 for d in dtypes)


def check_bfloat16_backend(label: str, ctx) -> None:
    """Raise, naming the op, when ``ctx``'s backend cannot hold bfloat16 arrays (device memory: CuPy has no
    bfloat16 type, so neither its kernels nor cuDNN's can be handed one)."""
    backend = get_backend(ctx.device_type)
    if not backend.host_memory:
        raise MXAsyncError(f"{label}: bfloat16 is not supported on {ctx} (backend {backend.name}: CuPy has no "
                           "bfloat16 arrays); use float16 on the GPU, or run this op on the CPU")


def _up(xp, a):
    return a.astype(_F32) if a.dtype == bfloat16 else a


class _Narrowing:
    """The float32 stand-ins for the bfloat16 arrays a kernel writes, and their rounding back."""

    __slots__ = ("pairs",)

    def __init__(self):
        self.pairs = []

    def stand_in(self, xp, a, req=None):
        if a.dtype != bfloat16:
            return a
        # ADD_TO and aux states start from the current values; NULL outputs are never read back
        wide = a.astype(_F32) if req is None or req == ADD_TO else xp.empty(a.shape, _F32)
        if req != NULL:
            self.pairs.append((a, wide))
        return wide

    def store(self):
        for narrow, wide in self.pairs:
            narrow[...] = wide


def widen_forward(xp, fn, asynchronous: bool = False):
    """``fn(op_ctx, in_data, req, out_data, aux[, on_complete])`` on float32 stand-ins for bfloat16 arrays."""
    def prepare(in_data, req, out_data, aux):
        back = _Narrowing()
        ins = [_up(xp, a) for a in in_data]
        outs = [back.stand_in(xp, o, r) for o, r in zip(out_data, req, strict=True)]
        return back, ins, outs, [back.stand_in(xp, a) for a in aux]

    if asynchronous:
        def run_async(op_ctx, in_data, req, out_data, aux, on_complete):
            back, ins, outs, aux_w = prepare(in_data, req, out_data, aux)

            def done(*a, **k):
                back.store()
                on_complete(*a, **k)
            fn(op_ctx, ins, req, outs, aux_w, done)
        return run_async

    def run(op_ctx, in_data, req, out_data, aux):
        back, ins, outs, aux_w = prepare(in_data, req, out_data, aux)
        fn(op_ctx, ins, req, outs, aux_w)
        back.store()
    return run


def widen_backward(xp, fn, asynchronous: bool = False):
    """``fn(op_ctx, out_grad, in_data, out_data, req, in_grad, aux[, on_complete])`` likewise."""
    def prepare(out_grad, in_data, out_data, req, in_grad, aux):
        back = _Narrowing()
        up = [[_up(xp, a) for a in group] for group in (out_grad, in_data, out_data)]
        grads = [back.stand_in(xp, g, r) for g, r in zip(in_grad, req, strict=True)]
        return back, up, grads, [back.stand_in(xp, a) for a in aux]

    if asynchronous:
        def run_async(op_ctx, out_grad, in_data, out_data, req, in_grad, aux, on_complete):
            back, (og, ins, outs), grads, aux_w = prepare(out_grad, in_data, out_data, req, in_grad, aux)

            def done(*a, **k):
                back.store()
                on_complete(*a, **k)
            fn(op_ctx, og, ins, outs, req, grads, aux_w, done)
        return run_async

    def run(op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        back, (og, ins, outs), grads, aux_w = prepare(out_grad, in_data, out_data, req, in_grad, aux)
        fn(op_ctx, og, ins, outs, req, grads, aux_w)
        back.store()
    return run
