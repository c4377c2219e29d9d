"""Activation, LeakyReLU, softmax, log_softmax, softmin, SoftmaxActivation, LRN, Dropout.

>>> import numpy as np, mxasync as mx
>>> from mxasync.operator import get_op
>>> get_op("Dropout").prepare(p=0.5).resources(is_train=True)
[<ResourceRequest.RANDOM: 0>]
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..kernels import activation as actk
from ..kernels import dropout as dropk
from ..kernels import lrn as lrnk
from ..kernels import softmax as smk
from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import DType, Field, OpParam, Shape

__all__: list[str] = []


class ActivationParam(OpParam):
    act_type: Literal["relu", "sigmoid", "tanh", "softrelu", "softsign"]


def _act_fwd(xp, p, x, out=None, run=PLAIN):
    return actk.activation(xp, x, p.act_type, out=out, run=run)


def _act_bwd(xp, p, og, ins, outs, need, into, run=PLAIN):
    return [actk.activation_backward(xp, og[0], outs[0], p.act_type, into=into[0], run=run)]


defop("Activation", param=ActivationParam, deps="og,out", inplace=True, fwd_out="inplace", bwd_into="inplace",
      fwd=_act_fwd, bwd=_act_bwd, doc="Elementwise activation: relu, sigmoid, tanh, softrelu (softplus) or softsign.")
register_numpy("Activation", _act_fwd, _act_bwd)


class LeakyReLUParam(OpParam):
    act_type: Literal["elu", "gelu", "leaky", "prelu", "rrelu", "selu"] = "leaky"
    slope: float = 0.25
    lower_bound: float = 0.125
    upper_bound: float = 0.334


class _LeakyProperty(FunctionalProperty):
    def list_outputs(self):
        return ["output", "mask"] if self.params.act_type == "rrelu" else ["output"]

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if self.params.act_type == "prelu":
            g = in_shapes[1] if len(in_shapes) > 1 else None
            g = g if g is not None else (None if d is None else (d[1] if len(d) > 1 else 1,))
            if d is not None and g is not None and 0 not in d and 0 not in g \
                    and actk.prelu_gamma_shape(tuple(g), tuple(d)) is None:
                raise self.error(f"gamma has shape {tuple(g)} but data {tuple(d)} needs (C,) = ({d[1] if len(d) > 1 else 1},), "
                                 "(1,) or a shape that lines up with data's axes 0 and 1")
            return [d, g], [d], []
        return [d], [d] * self.num_outputs(), []

    def forward_resource(self):
        return [ResourceRequest.RANDOM] if self.params.act_type == "rrelu" else []


def _leaky_fwd(xp, p, op_ctx, x, gamma=None, run=PLAIN):
    if p.act_type == "rrelu":
        rng = op_ctx.requested[0].get_random() if op_ctx.is_train else None
        return dropk.rrelu(xp, x, p.lower_bound, p.upper_bound, training=op_ctx.is_train, rng=rng)
    return actk.leaky_relu(xp, x, p.act_type, p.slope, gamma, run=run)


def _leaky_bwd(xp, p, og, ins, outs, run=PLAIN):
    if p.act_type == "rrelu":
        return [dropk.rrelu_backward(xp, og[0], ins[0], outs[1])]
    gamma = ins[1] if p.act_type == "prelu" else None
    gd, gg = actk.leaky_relu_backward(xp, og[0], ins[0], p.act_type, p.slope, gamma, run=run)
    return [gd, gg] if p.act_type == "prelu" else [gd]


defop("LeakyReLU", param=LeakyReLUParam, base=_LeakyProperty, arguments=("data", "gamma"), wants_ctx=True,
      args=lambda p: ["data", "gamma"] if p.act_type == "prelu" else ["data"], deps="og,in,out",
      fwd=_leaky_fwd, bwd=_leaky_bwd, doc="Leaky ReLU family: leaky, prelu (learned gamma), elu, selu, gelu, rrelu.",
      input_var_init={"gamma": '["Constant", {"value": 0.25}]'})  # MXNet's default init of a prelu gamma
register_numpy("LeakyReLU", _leaky_fwd, _leaky_bwd)  # gelu's erf from scipy


class SoftmaxParam(OpParam):
    axis: int = -1
    temperature: Optional[float] = None
    dtype: Optional[DType] = None
    use_length: bool = False


def _sm_type(prop, in_types):
    t = in_types[0]
    return [t], [prop.params.dtype or t], []


def _sm_shape(prop, in_shapes):
    data = in_shapes[0]
    if not prop.params.use_length:
        return [data], [data], []
    if data is None:
        return [None, in_shapes[1]], [None], []
    axis = prop.params.axis
    if not -len(data) <= axis < len(data):
        raise prop.error(f"axis={axis} is out of range for data of shape {data}")
    want = tuple(d for i, d in enumerate(data) if i != axis % len(data))
    if in_shapes[1] is not None and tuple(in_shapes[1]) != want:
        raise prop.error(f"length has shape {tuple(in_shapes[1])} but data {data} with axis={axis} needs {want}")
    return [data, want], [data], []


def _sm_types(prop, in_types):
    t = in_types[0]
    if not prop.params.use_length:
        return [t], [prop.params.dtype or t], []
    lt = in_types[1]
    if lt is not None and np.dtype(lt).kind not in "iu":
        raise prop.error(f"length must be an integer array, got {np.dtype(lt).name}")
    return [t, lt if lt is not None else np.int32], [prop.params.dtype or t], []


def _sm_fwd(xp, p, x, length=None):
    if p.use_length:
        return smk.masked_softmax(xp, x, length, p.axis, p.temperature, p.dtype)
    return smk.softmax(xp, x, p.axis, p.temperature, p.dtype)


def _sm_bwd(xp, p, og, ins, outs):
    # the output is 0 beyond each length, so the usual formula gives those positions no gradient
    gd = smk.softmax_backward(xp, og[0], outs[0], p.axis, p.temperature)
    return [gd, None] if p.use_length else [gd]


defop("softmax", param=SoftmaxParam, deps="og,out", shape=_sm_shape, dtype=_sm_types, arguments=("data", "length"),
      args=lambda p: ["data", "length"] if p.use_length else ["data"], fwd=_sm_fwd, bwd=_sm_bwd,
      doc="Softmax along ``axis`` with an optional ``temperature``; with ``use_length=True`` the integer "
          "input ``length`` (data's shape without ``axis``) limits each slice to its first positions "
          "(0 beyond them).")
def _lsm_shape(prop, in_shapes):
    if prop.params.use_length:
        raise prop.error("use_length=True is not supported (log_softmax has no length input)")
    return [in_shapes[0]]


def _lsm_fwd(xp, p, x, run=PLAIN):
    return smk.log_softmax(xp, x, p.axis, p.temperature, p.dtype, run=run)


def _lsm_bwd(xp, p, og, ins, outs, run=PLAIN):
    return [smk.log_softmax_backward(xp, og[0], outs[0], p.axis, p.temperature, run=run)]


defop("log_softmax", param=SoftmaxParam, deps="og,out", dtype=_sm_type, shape=_lsm_shape, fwd=_lsm_fwd, bwd=_lsm_bwd,
      doc="Log of the softmax along ``axis``, computed stably.")
register_numpy("log_softmax", _lsm_fwd, _lsm_bwd)  # blocks of rows in cache


class LRNParam(OpParam):
    alpha: float = 1e-4
    beta: float = 0.75
    knorm: float = 2.0
    nsize: int = Field(gt=0)


class _TwoOut(FunctionalProperty):
    """Ops with one visible output and a hidden one kept for backward (LRN's norm, Dropout's mask)."""

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        return [d], [d, d], []


defop("LRN", param=LRNParam, base=_TwoOut, outputs=("output", "tmp_norm"), deps="og,in,out",
      fwd=lambda xp, p, x: lrnk.lrn(xp, x, p.nsize, p.alpha, p.beta, p.knorm),
      bwd=lambda xp, p, og, ins, outs: [lrnk.lrn_backward(xp, og[0], ins[0], p.nsize, p.alpha, p.beta, p.knorm,
                                                          norm=outs[1])],
      doc="Local response normalisation across ``nsize`` neighbouring channels.")


class DropoutParam(OpParam):
    p: float = Field(default=0.5, ge=0, le=1)
    mode: Literal["training", "always"] = "training"
    axes: Shape = ()
    cudnn_off: Optional[bool] = False


def _drop_fwd(xp, p, op_ctx, x):
    active = (op_ctx.is_train or p.mode == "always") and p.p > 0
    rng = op_ctx.requested[0].get_random() if active else None
    return dropk.dropout(xp, x, p.p, p.mode, p.axes, training=op_ctx.is_train, rng=rng)


defop("Dropout", param=DropoutParam, base=_TwoOut, outputs=("output", "mask"), deps="og,out", wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), fwd=_drop_fwd, xp_gradient=True,
      bwd=lambda xp, p, og, ins, outs: [dropk.dropout_backward(xp, og[0], outs[1])],
      doc="Zero elements with probability ``p`` while training (scaling the rest by 1/(1-p)); identity at test time.")


# -- softmin --------------------------------------------------------------------------------------
class SoftminParam(OpParam):
    axis: int = -1
    temperature: Optional[float] = None
    dtype: Optional[Literal["float16", "float32", "float64"]] = None
    use_length: bool = False


class _SoftminProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if self.params.use_length:
            raise self.error("use_length=True is not supported: softmin takes no length input")
        if s is None:
            return [None], [None], []
        a = self.params.axis
        if not -len(s) <= a < len(s):
            raise self.error(f"axis={a} is out of range for a {len(s)}-D input of shape {tuple(s)}")
        return [s], [s], []

    def infer_type(self, in_types):
        t = in_types[0]
        if t is not None and np.dtype(t).kind != "f":
            raise self.error(f"data has dtype {np.dtype(t).name}; softmin needs a floating-point input")
        return [t], [self.params.dtype or t], []


defop("softmin", param=SoftminParam, base=_SoftminProperty, deps="og,out",
      fwd=lambda xp, p, x: smk.softmax(xp, -x, p.axis, p.temperature, p.dtype),
      bwd=lambda xp, p, og, ins, outs: [-smk.softmax_backward(xp, og[0], outs[0], p.axis, p.temperature)],
      doc="softmax of ``-data`` along ``axis``: ``exp(-x/T) / sum(exp(-x/T))``; ``dtype`` sets the output's.")


# -- SoftmaxActivation ---------------------------------------------------------------------------
class SoftmaxActivationParam(OpParam):
    mode: Literal["instance", "channel"] = "instance"


def _sa_axis(p):
    return 1 if p.mode == "channel" else -1


defop("SoftmaxActivation", param=SoftmaxActivationParam, deps="og,out",
      fwd=lambda xp, p, x: smk.softmax(xp, x, axis=_sa_axis(p)),
      bwd=lambda xp, p, og, ins, outs: [smk.softmax_backward(xp, og[0], outs[0], axis=_sa_axis(p))],
      doc="Softmax over the last axis (instance) or over axis 1 (channel); superseded by ``softmax``.")
