"""Half-precision kernels computed in float32 on host backends.

NumPy has no bfloat16 arithmetic of its own: ``ml_dtypes`` gives it ufunc loops, but its
reductions accumulate in bfloat16 (the sum of 1000 ones is 256) and its matmul is a slow generic
loop.  NumPy's float16 is native, but its matmul has no BLAS (a LeNet step is ~20x slower than in
float32).  So on a host backend an op that reads or writes bfloat16, and a BLAS-bound op
(``float16_in_float32`` in its declaration: FullyConnected, Convolution, dot, RNN) that reads or
writes float16, runs its ordinary kernel on float32 copies: those inputs, outputs, aux states and
inputs the op writes become float32 for the kernel, and the results are rounded back (as MXNet's
half-precision kernels accumulate in float32).  Other float16 ops keep numpy's float16 kernels
(and the per-dtype semantics some of them mirror from MXNet, NaN handling for one).  Arrays of other types pass
unchanged, so ``Cast`` / ``amp_cast`` from or to the half types work through the same kernels.
Device backends (CuPy) run float16 natively and have no bfloat16 (:func:`widens` raises, naming the op).

:class:`~mxasync.operator.step.ForwardPlan` and ``BackwardPlan`` decide once per plan (the dtypes
are part of what a plan is cached on) whether to wrap the kernel with :func:`widen_forward` /
:func:`widen_backward`; the common float32 call pays nothing.
"""

from __future__ import annotations

import numpy as np

from .._bfloat16 import bfloat16
from ..backends import get_backend, on_switch
from ..base import MXAsyncError
from .base import ADD_TO, NULL

__all__ = ["widens", "widen_forward", "widen_backward"]

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_HALF = (_F16, bfloat16)
_HOST: dict = {}  # device type -> whether its backend computes on host (numpy) arrays


def _host(ctx) -> bool:
    host = _HOST.get(ctx.device_type)
    if host is None:
        host = _HOST[ctx.device_type] = bool(get_backend(ctx.device_type).host_memory)
    return host


on_switch(_HOST.clear)  # another backend may serve a device type now


def widens(prop, ctx, dtypes) -> bool:
    """Whether op ``prop``'s kernel on ``ctx`` runs on float32 stand-ins for arrays of ``dtypes``: on host
    backends when one is bfloat16, or float16 for an op declaring ``float16_in_float32``.  bfloat16 off
    the host raises, naming the op (CuPy has no bfloat16 type, so neither its kernels nor cuDNN's can be
    handed one)."""
    # float32 (a singleton dtype) is skipped by identity: this runs for every node of every backward
    found = {np.dtype(d) for d in dtypes if d is not None and d is not _F32 and d in _HALF}
    if not found:
        return False
    if _host(ctx):
        return bfloat16 in found or prop.float16_in_float32
    if bfloat16 in found:
        backend = get_backend(ctx.device_type)
        raise MXAsyncError(f"{prop.label}: bfloat16 is not supported on {ctx} (backend {backend.name}: CuPy has "
                           "no bfloat16 arrays); use float16 on the GPU, or run this op on the CPU")
    return False


def _up(xp, a):
    return a.astype(_F32) if a.dtype in _HALF else a


class _Narrowing:
    """The float32 stand-ins for the half-precision arrays a kernel writes, and their rounding back."""

    __slots__ = ("pairs",)

    def __init__(self):
        self.pairs = []

    def stand_in(self, xp, a, req=None):
        if a.dtype not in _HALF:
            return a
        # ADD_TO and aux states start from the current values; NULL outputs are never read back
        wide = a.astype(_F32) if req is None or req == ADD_TO else xp.empty(a.shape, _F32)
        if req != NULL:
            self.pairs.append((a, wide))
        return wide

    def store(self):
        # values beyond float16's range become inf, as a float16 kernel's would (AMP's loss scaler looks for them)
        with np.errstate(over="ignore"):
            for narrow, wide in self.pairs:
                narrow[...] = wide


def widen_forward(xp, fn, asynchronous: bool = False, mutated=()):
    """``fn(op_ctx, in_data, req, out_data, aux[, on_complete])`` on float32 stand-ins for half-precision arrays;
    the inputs at positions ``mutated`` (the op writes them: optimizer states) are written back too."""
    def prepare(in_data, req, out_data, aux):
        back = _Narrowing()
        ins = [back.stand_in(xp, a) if i in mutated else _up(xp, a) for i, a in enumerate(in_data)]
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
