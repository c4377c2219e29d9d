"""``_contrib_BatchNormWithReLU`` (MXNet 1.9.1's fused ``relu(BatchNorm(...))``, ``mx.nd.contrib.BatchNormWithReLU``):
BatchNorm's inputs, params, aux states and outputs (``output, mean, var``), the output passed through relu.
The gradient is BatchNorm's of the head gradient masked where the output is positive.

>>> import mxasync as mx
>>> x = mx.nd.array([[[-1.0]], [[1.0]]])
>>> g, b = mx.nd.ones((1,)), mx.nd.zeros((1,))
>>> mx.nd.contrib.BatchNormWithReLU(x, g, b, mx.nd.zeros((1,)), mx.nd.ones((1,)), eps=0.0).asnumpy().ravel()
array([0., 1.], dtype=float32)
"""

from __future__ import annotations

from ..base import Operator, assign
from ..nn.batch_norm import BatchNormOperator, BatchNormParam, BatchNormProperty, bnk
from ..registry import find_override, register_op

__all__: list[str] = []


class _BatchNormReLUOperator(BatchNormOperator):
    def forward(self, op_ctx, in_data, req, out_data, aux):
        p, xp = self.p, self.xp
        training = op_ctx.is_train
        out, mean, invstd = self.fwd(xp, *in_data, *aux, eps=p.eps, momentum=p.momentum, fix_gamma=p.fix_gamma,
                                     use_global_stats=p.use_global_stats, axis=p.axis, training=training)
        for o, r, v in zip(out_data, req, (xp.maximum(out, 0), mean, invstd), strict=True):
            assign(o, r, v)
        if training and not p.use_global_stats:
            bnk.batch_norm_update_moving(xp, aux[0], aux[1], mean, invstd, p.momentum, p.eps)

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        masked = out_grad[0] * (out_data[0] > 0)
        super().backward(op_ctx, [masked, *out_grad[1:]], in_data, out_data, req, in_grad, aux)


@register_op("_contrib_BatchNormWithReLU", param=BatchNormParam)
class BatchNormWithReLUProperty(BatchNormProperty):
    """Batch normalisation followed by relu (one op)."""

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1], out_data[0], out_data[1], out_data[2]]

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        backend = get_backend(ctx.device_type)
        return _BatchNormReLUOperator(self.params, backend.xp, find_override("BatchNorm", backend, bnk.batch_norm),
                                      find_override("BatchNorm.backward", backend, bnk.batch_norm_backward))
