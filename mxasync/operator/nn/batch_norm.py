"""BatchNorm, written as a full :class:`OperatorProperty` + :class:`Operator` (the worked example).

Aux states ``moving_mean``/``moving_var`` are updated in place only in
training without ``use_global_stats``.  Outputs are ``output, mean, var``;
only ``output`` is visible unless ``output_mean_var``.  As in MXNet's CPU
implementation, the ``var`` output holds the saved inverse std that backward reads.

>>> from mxasync.operator import get_op
>>> prop = get_op("BatchNorm").prepare(fix_gamma=False)
>>> prop.list_arguments(), prop.list_auxiliary_states(), prop.num_visible_outputs()
(['data', 'gamma', 'beta'], ['moving_mean', 'moving_var'], 1)
>>> prop.infer_shape([(4, 3, 2, 2), None, None])
([(4, 3, 2, 2), (3,), (3,)], [(4, 3, 2, 2), (3,), (3,)], [(3,), (3,)])
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..base import ADD_TO, NULL, WRITE_TO, Operator, OperatorProperty, assign
from ..kernels import batch_norm as bnk
from ..numpy_overrides import register_numpy
from ..params import OpParam
from ..registry import find_override, register_op

__all__ = ["BatchNormParam", "BatchNormProperty"]


class BatchNormParam(OpParam):
    eps: float = 1e-3
    momentum: float = 0.9
    fix_gamma: bool = True
    use_global_stats: bool = False
    output_mean_var: bool = False
    axis: int = 1
    cudnn_off: bool = False
    min_calib_range: Optional[float] = None
    max_calib_range: Optional[float] = None


class BatchNormOperator(Operator):
    def __init__(self, params: BatchNormParam, xp, fwd, bwd):
        self.p, self.xp, self.fwd, self.bwd = params, xp, fwd, bwd

    def forward(self, op_ctx, in_data, req, out_data, aux):
        p, xp = self.p, self.xp
        data, gamma, beta = in_data
        moving_mean, moving_var = aux
        training = op_ctx.is_train
        out, mean, invstd = self.fwd(xp, data, gamma, beta, moving_mean, moving_var, eps=p.eps, momentum=p.momentum,
                                     fix_gamma=p.fix_gamma, use_global_stats=p.use_global_stats, axis=p.axis,
                                     training=training, out=out_data[0] if req[0] == WRITE_TO else None)
        assign(out_data[0], req[0], out)
        assign(out_data[1], req[1], mean)
        assign(out_data[2], req[2], invstd)
        if training and not p.use_global_stats:
            bnk.batch_norm_update_moving(xp, moving_mean, moving_var, mean, invstd, p.momentum, p.eps)

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        p = self.p
        if all(r == NULL for r in req):
            return
        gd, gg, gb = self.bwd(self.xp, out_grad[0], in_data[0], in_data[1], out_data[1], out_data[2],
                              fix_gamma=p.fix_gamma, use_global_stats=p.use_global_stats, axis=p.axis,
                              training=op_ctx.is_train, data_grad=in_grad[0] if req[0] == WRITE_TO else None)
        for o, r, g in zip(in_grad, req, (gd, gg, gb), strict=False):
            if p.fix_gamma and g is gg and r != ADD_TO and r != NULL:
                o[...] = 0  # MXNet: a fixed gamma gets a zero gradient
            else:
                assign(o, r, g)


@register_op("BatchNorm", param=BatchNormParam, aliases=("BatchNorm_v1",))
class BatchNormProperty(OperatorProperty):
    """Batch normalisation over ``axis`` with learned gamma/beta and moving statistics."""

    arguments = ("data", "gamma", "beta")
    outputs = ("output", "mean", "var")
    aux_states = ("moving_mean", "moving_var")

    def num_visible_outputs(self) -> int:
        return 3 if self.params.output_mean_var else 1

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None] * 3, [None] * 2
        ax = self.params.axis % len(d)
        c = (d[ax],)
        for name, s in zip(("gamma", "beta"), in_shapes[1:], strict=False):
            if s is not None and tuple(s) != c:
                raise self.error(f"{name} has shape {tuple(s)} but data {tuple(d)} has {c[0]} channels on axis {ax}")
        return [d, c, c], [d, c, c], [c, c]

    def infer_type(self, in_types):
        t = in_types[0]
        # MXNet keeps gamma/beta/statistics in float32 for float16 and bfloat16 data (their AccReal)
        pt = "float32" if t is not None and str(np.dtype(t)) in ("float16", "bfloat16") else t
        return [t, pt, pt], [t, pt, pt], [pt, pt]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1], out_data[1], out_data[2]]

    def mutate_inputs(self) -> list[int]:
        return []  # aux states are always written by the caller's contract (listed as mutated)

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        backend = get_backend(ctx.device_type)
        return BatchNormOperator(self.params, backend.xp, find_override("BatchNorm", backend, bnk.batch_norm),
                                 find_override("BatchNorm.backward", backend, bnk.batch_norm_backward))


register_numpy("BatchNorm", bnk.batch_norm, bnk.batch_norm_backward)  # BatchNormReLU finds them too
