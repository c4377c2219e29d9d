"""``_contrib_SyncBatchNorm``: BatchNorm over axis 1 whose batch statistics span ``ndev`` devices.

MXNet's semantics (``src/operator/contrib/sync_batch_norm-inl.h``): the copies of one layer on
``ndev`` devices (one per context, all with the same ``key``) normalise with the mean and the
biased variance of the union of their batches in training; backward reduces the gradient sums over
them too, while gamma's and beta's gradients stay per device (the trainer sums them). The outputs
``mean``/``var`` hold the batch mean and variance, and the moving statistics are updated in
*backward* (MXNet's SyncBatchNorm, unlike BatchNorm: a forward alone leaves them).

With ``ndev > 1`` in training each call is an asynchronous engine op (``asynchronous``): it
computes its device's sums, hands them to its round (:mod:`._device_rounds`) and returns; the last
copy to arrive combines them and finishes every copy. The union's statistics are exact for shards
of any sizes (MXNet averages the devices' means, the same for equal shards).

>>> import mxasync as mx
>>> x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
>>> y = mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,)),
...                                 mx.nd.ones((2,)), fix_gamma=False, key="bn0")
>>> y.shape
(2, 2)
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from ..base import Operator, assign
from ..nn.batch_norm import BatchNormProperty
from ..params import OpParam
from ..registry import register_op
from ._device_rounds import arrive

__all__ = ["SyncBatchNormParam"]


class SyncBatchNormParam(OpParam):
    eps: float = 1e-3
    momentum: float = 0.9
    fix_gamma: bool = True
    use_global_stats: bool = False
    output_mean_var: bool = False
    ndev: int = Field(1, ge=1, description="the number of devices whose batch statistics are reduced together")
    key: str = Field("", description="the name that ties the op's copies on the devices together")
    axis: ClassVar[int] = 1  # MXNet's SyncBatchNorm normalises over the channel axis 1 only


def _host(a) -> np.ndarray:
    get = getattr(a, "get", None)  # a CuPy array
    return np.asarray(get() if get is not None else a)


def _combine_forward(parts: list) -> tuple:
    """``(count, mean, var)`` of the union from each device's ``(count, mean, M2)`` (Chan's formula)."""
    _check_channels(parts)
    n = sum(p[0] for p in parts)
    mean = sum(p[0] * p[1] for p in parts) / n
    m2 = sum(p[2] + p[0] * (p[1] - mean) ** 2 for p in parts)
    return n, mean, m2 / n


def _combine_backward(parts: list) -> tuple:
    """``(count, sum of dy, sum of dy * (x - mean))`` over the devices."""
    _check_channels(parts)
    return sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts)


def _check_channels(parts: list) -> None:
    sizes = {p[1].shape[0] for p in parts}
    if len(sizes) > 1:
        raise ValueError(f"the copies on the devices have different channel counts {sorted(sizes)}")


class SyncBatchNormOperator(Operator):
    def __init__(self, params: SyncBatchNormParam, backend, label: str):
        self.p, self.xp, self.label = params, backend.xp, label
        # a device backend launches on the op's device and stream: the copy that fills a round finishes
        # the others, each inside its own op's scope
        self._scope = backend.launch_scope if backend.asynchronous else None

    def _finisher(self, op_ctx, write, on_complete):
        """``finish(result, exc)`` for a round: ``write(result)``, then the op completes, with the round's
        or the write's error if there is one (the engine names the op); both in this op's launch scope."""
        scope = self._scope

        def complete(result, exc) -> None:
            if exc is None:
                try:
                    write(result)
                except Exception as err:  # noqa: BLE001 - lands on the op's outputs
                    exc = err
            if exc is None:
                on_complete()
            else:
                on_complete(exc)

        def finish(result, exc) -> None:
            if scope is None:
                complete(result, exc)
            else:
                with scope(op_ctx.run_ctx):
                    complete(result, exc)
        return finish

    # -- pieces -------------------------------------------------------------------------------
    def _stats(self, op_ctx) -> bool:
        return op_ctx.is_train and not self.p.use_global_stats

    def _round(self, phase: str, ctx, payload, combine, finish) -> None:
        p = self.p
        if p.ndev == 1:
            try:
                result = combine([payload])
            except Exception as exc:  # noqa: BLE001 - reported as the op's failure
                finish(None, exc)
                return
            finish(result, None)
            return
        arrive((p.key, phase), p.ndev, ctx, payload, combine, finish, f"{self.label}(key={p.key!r})")

    def _bshape(self, data) -> tuple:
        return (1, data.shape[1]) + (1,) * (data.ndim - 2)

    def _gamma(self, gamma):
        return self.xp.ones_like(gamma) if self.p.fix_gamma else gamma

    # -- forward ------------------------------------------------------------------------------
    def forward(self, op_ctx, in_data, req, out_data, aux) -> None:
        if self._stats(op_ctx) and self.p.ndev > 1:
            raise RuntimeError(f"{self.label}: ndev={self.p.ndev} in training runs as an asynchronous op "
                               "(forward_async); this caller runs ops synchronously")
        errors: list = []
        self.forward_async(op_ctx, in_data, req, out_data, aux, lambda exc=None: errors.append(exc))
        if errors and errors[0] is not None:
            raise errors[0]

    def forward_async(self, op_ctx, in_data, req, out_data, aux, on_complete) -> None:
        xp, p = self.xp, self.p
        data, gamma, beta = in_data
        moving_mean, moving_var = aux
        gam = self._gamma(gamma)
        bs = self._bshape(data)
        if not self._stats(op_ctx):
            scale = gam / xp.sqrt(moving_var + p.eps)
            out = data * scale.reshape(bs).astype(data.dtype) + (beta - scale * moving_mean).reshape(bs).astype(
                data.dtype)
            assign(out_data[0], req[0], out)
            assign(out_data[1], req[1], moving_mean)
            assign(out_data[2], req[2], moving_var)
            on_complete()
            return
        axes = (0,) + tuple(range(2, data.ndim))
        n = data.size // max(data.shape[1], 1)
        mean_d = xp.sum(data, axis=axes, dtype=np.float64) / n
        m2_d = xp.sum(xp.square(data - mean_d.reshape(bs).astype(data.dtype)), axis=axes, dtype=np.float64)

        def write(result) -> None:
            _, mean, var = result
            mean_x = xp.asarray(mean, dtype=gamma.dtype)
            var_x = xp.asarray(var, dtype=gamma.dtype)
            invstd = 1.0 / xp.sqrt(var_x + p.eps)
            w = (gam * invstd).reshape(bs).astype(data.dtype)
            out = (data - mean_x.reshape(bs).astype(data.dtype)) * w + beta.reshape(bs).astype(data.dtype)
            assign(out_data[0], req[0], out)
            assign(out_data[1], req[1], mean_x)
            assign(out_data[2], req[2], var_x)

        self._round("forward", op_ctx.run_ctx.ctx if op_ctx.run_ctx is not None else None,
                    (n, _host(mean_d), _host(m2_d)), _combine_forward, self._finisher(op_ctx, write, on_complete))

    # -- backward -----------------------------------------------------------------------------
    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux) -> None:
        if self._stats(op_ctx) and self.p.ndev > 1:
            raise RuntimeError(f"{self.label}: ndev={self.p.ndev} in training runs as an asynchronous op "
                               "(backward_async); this caller runs ops synchronously")
        errors: list = []
        self.backward_async(op_ctx, out_grad, in_data, out_data, req, in_grad, aux,
                            lambda exc=None: errors.append(exc))
        if errors and errors[0] is not None:
            raise errors[0]

    def backward_async(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux, on_complete) -> None:
        xp, p = self.xp, self.p
        dy, data, gamma = out_grad[0], in_data[0], in_data[1]
        moving_mean, moving_var = aux
        gam = self._gamma(gamma)
        bs = self._bshape(data)
        axes = (0,) + tuple(range(2, data.ndim))
        if not self._stats(op_ctx):
            invstd = 1.0 / xp.sqrt(moving_var + p.eps)
            xhat = (data - moving_mean.reshape(bs).astype(data.dtype)) * invstd.reshape(bs).astype(data.dtype)
            self._assign_grads(req, in_grad, dy * (gam * invstd).reshape(bs).astype(data.dtype),
                               xp.sum(dy * xhat, axis=axes, dtype=np.float64), xp.sum(dy, axis=axes, dtype=np.float64))
            on_complete()
            return
        mean, var = out_data[1], out_data[2]
        n = data.size // max(data.shape[1], 1)
        xm = data - mean.reshape(bs).astype(data.dtype)
        sg_d = xp.sum(dy, axis=axes, dtype=np.float64)
        sgx_d = xp.sum(dy * xm, axis=axes, dtype=np.float64)
        # the sums go round weighted by this device's gamma: the exact gradient even when the copies' gammas
        # differ (MXNet sums dy and applies the local gamma after: the same for replicas)
        gam64 = gam.astype(np.float64)

        def write(result) -> None:
            total, sg, sgx = result
            invstd = 1.0 / xp.sqrt(var.astype(np.float64) + p.eps)
            a = (invstd * xp.asarray(sg) / total).reshape(bs).astype(data.dtype)
            b = (invstd ** 3 * xp.asarray(sgx) / total).reshape(bs).astype(data.dtype)
            dx = dy * (gam * invstd).reshape(bs).astype(data.dtype) - a - xm * b
            self._assign_grads(req, in_grad, dx, sgx_d * invstd, sg_d)
            moving_mean[...] = moving_mean * p.momentum + mean * (1 - p.momentum)
            moving_var[...] = moving_var * p.momentum + var * (1 - p.momentum)

        self._round("backward", op_ctx.run_ctx.ctx if op_ctx.run_ctx is not None else None,
                    (n, _host(sg_d * gam64), _host(sgx_d * gam64)), _combine_backward,
                    self._finisher(op_ctx, write, on_complete))

    def _assign_grads(self, req, in_grad, dx, dgamma, dbeta) -> None:
        assign(in_grad[0], req[0], dx)
        if self.p.fix_gamma:
            dgamma = dgamma * 0  # MXNet: a fixed gamma gets a zero gradient
        assign(in_grad[1], req[1], dgamma.astype(in_grad[1].dtype))
        assign(in_grad[2], req[2], dbeta.astype(in_grad[2].dtype))


@register_op("_contrib_SyncBatchNorm", param=SyncBatchNormParam)
class SyncBatchNormProperty(BatchNormProperty):
    """BatchNorm over axis 1 with statistics reduced across ``ndev`` devices under ``key``."""

    backward_writes_aux = True

    def asynchronous(self, is_train: bool) -> bool:
        p = self.params
        return p.ndev > 1 and is_train and not p.use_global_stats

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1], out_data[1], out_data[2]]

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        return SyncBatchNormOperator(self.params, get_backend(ctx.device_type), self.label)
