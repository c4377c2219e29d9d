"""``SVMOutput``: a multi-class hinge loss layer (MXNet's src/operator/svm_output.cc).

Forward passes the scores through; backward is the gradient of the one-vs-all hinge
loss (squared by default, linear with ``use_linear``) for the given integer labels.

>>> import mxasync as mx
>>> mx.nd.SVMOutput(mx.nd.array([[1, 2, 3]]), mx.nd.array([2])).asnumpy()
array([[1., 2., 3.]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import defop
from ..params import OpParam
from .output import _LabelProperty

__all__ = ["SVMOutputParam"]


class SVMOutputParam(OpParam):
    margin: float = Field(1.0, description="the margin of the hinge")
    regularization_coefficient: float = Field(1.0, description="multiplies the gradient")
    use_linear: bool = Field(False, description="L1-SVM (linear hinge) instead of L2-SVM (squared hinge)")


class _SVMOutputProperty(_LabelProperty):
    def label_shape(self, d):
        return (d[0],)


def _svm_bwd(xp, p, og, ins, outs):
    data, label = ins
    scores = data.reshape(data.shape[0], -1)
    is_label = xp.arange(scores.shape[1]).reshape(1, -1) == label.astype("int64").reshape(-1, 1)
    margin, coef = scores.dtype.type(p.margin), scores.dtype.type(p.regularization_coefficient)
    # the label's score should exceed +margin, every other score should stay below -margin
    signed = xp.where(is_label, scores, -scores)
    violated = margin > signed
    if p.use_linear:
        grad = violated.astype(scores.dtype)
    else:
        grad = xp.where(violated, 2 * (margin - signed), scores.dtype.type(0))
    grad = xp.where(is_label, -grad, grad) * coef
    return [grad.reshape(data.shape), None]


defop("SVMOutput", param=SVMOutputParam, base=_SVMOutputProperty, arguments=("data", "label"), deps="in",
      fwd=lambda xp, p, d, lab: d.copy(), bwd=_svm_bwd,
      doc="Scores pass through; backward is the hinge-loss gradient for the labels (a loss layer: the head "
          "gradient is not used).")
