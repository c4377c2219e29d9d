"""``IdentityAttachKLSparseReg`` (MXNet 1.9.1's sparseness regulariser for sigmoid activations): the identity
forward; backward adds ``penalty * (-rho / m + (1 - rho) / (1 - m))`` to the head gradient, with ``rho`` the
``sparseness_target`` and ``m`` the aux state ``moving_avg`` (one value per column of the 2-D data) after the
update ``m = momentum * m + (1 - momentum) * mean(data, axis=0)`` that backward makes. The gradient is thus
a penalty's (the KL divergence of each unit's mean activation from rho), not the derivative of the identity.

>>> from mxasync.operator import get_op
>>> prop = get_op("IdentityAttachKLSparseReg").prepare()
>>> prop.list_auxiliary_states(), prop.infer_shape([(4, 3)])
(['moving_avg'], ([(4, 3)], [(4, 3)], [(3,)]))
"""

from __future__ import annotations

from ..base import Operator, OperatorProperty, assign
from ..params import Field, OpParam
from ..registry import register_op

__all__ = ["KLSparseRegParam"]


class KLSparseRegParam(OpParam):
    sparseness_target: float = Field(0.1, ge=0, le=1, description="the target mean activation rho")
    penalty: float = Field(0.001, description="the weight of the sparseness penalty")
    momentum: float = Field(0.9, ge=0, le=1, description="the momentum of the moving average of the activations")


class _KLSparseRegOperator(Operator):
    def __init__(self, params, xp):
        self.p, self.xp = params, xp

    def forward(self, op_ctx, in_data, req, out_data, aux):
        assign(out_data[0], req[0], in_data[0])

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        p, (moving,) = self.p, aux
        avg = in_data[0].mean(axis=0)
        moving[...] = p.momentum * moving + (1 - p.momentum) * avg
        rho = p.sparseness_target
        assign(in_grad[0], req[0], out_grad[0] + p.penalty * (-rho / moving + (1 - rho) / (1 - moving)))


@register_op("IdentityAttachKLSparseReg", param=KLSparseRegParam)
class KLSparseRegProperty(OperatorProperty):
    """Identity forward; backward adds the KL sparseness penalty's gradient and updates ``moving_avg``."""

    arguments = ("data",)
    aux_states = ("moving_avg",)

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], [None]
        if len(d) != 2:
            raise self.error(f"data has shape {tuple(d)}; it must be 2-D (batch, units)")
        return [tuple(d)], [tuple(d)], [(d[1],)]

    def infer_type(self, in_types):
        t = in_types[0]
        return [t], [t], [t]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        return _KLSparseRegOperator(self.params, get_backend(ctx.device_type).xp)
