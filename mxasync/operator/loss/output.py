"""Output and gradient-control ops: SoftmaxOutput, *RegressionOutput, MakeLoss, BlockGrad, ElementWiseSum.

Output layers ignore the incoming gradient (MXNet's rule): their backward is
the loss gradient with respect to the data, and the label gets none.

>>> from mxasync.operator import get_op
>>> get_op("SoftmaxOutput").prepare().infer_shape([(4, 10), None])
([(4, 10), (4,)], [(4, 10)], [])
"""

from __future__ import annotations

from typing import Literal

from ..functional import FunctionalProperty, defop
from ..kernels import output as outk
from ..params import Field, OpParam

__all__: list[str] = []


class SoftmaxOutputParam(OpParam):
    grad_scale: float = 1.0
    ignore_label: float = -1.0
    multi_output: bool = False
    use_ignore: bool = False
    preserve_shape: bool = False
    normalization: Literal["batch", "null", "valid"] = "null"
    out_grad: bool = False
    smooth_alpha: float = 0.0


class _LabelProperty(FunctionalProperty):
    arguments = ("data", "label")

    def label_shape(self, d):
        return tuple(d)

    def infer_shape(self, in_shapes):
        d, lab = in_shapes
        if d is None:
            return list(in_shapes), [None], []
        want = self.label_shape(d)
        if lab is not None and tuple(lab) not in (want, tuple(d)) and _size(lab) != _size(want):
            raise self.error(f"label has shape {tuple(lab)} but data {tuple(d)} needs {want}")
        return [d, lab if lab is not None else want], [d], []

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]


def _size(s):
    n = 1
    for x in s:
        n *= x
    return n


class _SoftmaxOutputProperty(_LabelProperty):
    def label_shape(self, d):
        p = self.params
        if p.multi_output:
            return (d[0],) + tuple(d[2:])
        if p.preserve_shape:
            return tuple(d[:-1])
        return (d[0],)


def _so_bwd(xp, p, og, ins, outs, need, into):
    if not need[0]:
        return [None, None]
    kw = p.model_dump(exclude={"out_grad"})
    return [outk.softmax_output_backward(xp, outs[0], ins[1], out_grad=p.out_grad, ograd=og[0], into=into[0], **kw),
            None]


defop("SoftmaxOutput", param=SoftmaxOutputParam, base=_SoftmaxOutputProperty, arguments=("data", "label"),
      aliases=("Softmax",), deps="og,in,out",
      fwd=lambda xp, p, d, lab, out=None: outk.softmax_output(xp, d, p.multi_output, p.preserve_shape, out=out),
      bwd=_so_bwd, fwd_out=True, bwd_into=True,
      doc="Softmax forward; backward is the cross-entropy gradient w.r.t. data for the given labels.")


class RegressionParam(OpParam):
    grad_scale: float = 1.0


for _name, _f, _b in (("LinearRegressionOutput", outk.linear_regression_output, outk.linear_regression_output_backward),
                      ("LogisticRegressionOutput", outk.logistic_regression_output,
                       outk.logistic_regression_output_backward),
                      ("MAERegressionOutput", outk.mae_regression_output, outk.mae_regression_output_backward)):
    defop(_name, param=RegressionParam, base=_LabelProperty, arguments=("data", "label"), deps="in,out",
          fwd=lambda xp, p, d, lab, f=_f: f(xp, d),
          bwd=lambda xp, p, og, ins, outs, b=_b: [b(xp, outs[0], ins[1], p.grad_scale), None],
          doc=f"{_name}: forward passes data through (sigmoid for logistic); backward is the loss gradient.")


class MakeLossParam(OpParam):
    grad_scale: float = 1.0
    valid_thresh: float = 0.0
    normalization: Literal["null", "batch", "valid"] = "null"


def _make_loss_bwd(xp, p, og, ins, outs):
    x = ins[0]
    g = xp.full(x.shape, p.grad_scale, dtype=x.dtype)
    if p.normalization == "batch":
        g /= x.shape[0]
    elif p.normalization == "valid":
        g /= max(1, int((x > p.valid_thresh).sum()))
    return [g]


defop("MakeLoss", param=MakeLossParam, aliases=("make_loss",), deps="in", inplace=True,
      fwd=lambda xp, p, x: x.copy(), bwd=_make_loss_bwd,
      doc="Treat the input as a loss: backward is ``grad_scale`` (normalised by batch or valid count).")
defop("BlockGrad", zero_gradient=True, aliases=("stop_gradient",), deps="", inplace=True, fwd=lambda xp, p, x: x.copy(),
      bwd=lambda xp, p, og, ins, outs: [None], doc="Identity forward; no gradient flows back.")


class ElementWiseSumParam(OpParam):
    num_args: int = Field(ge=1)


def _ews_fwd(xp, p, *xs):
    out = xs[0].copy()
    for x in xs[1:]:
        out += x
    return out


defop("ElementWiseSum", param=ElementWiseSumParam, aliases=("add_n", "_sum"), var_args="num_args", deps="og",
      args=lambda p: [f"arg{i}" for i in range(p.num_args)], fwd=_ews_fwd,
      bwd=lambda xp, p, og, ins, outs: [og[0]] * p.num_args, doc="Sum of ``num_args`` arrays of the same shape.")
