"""Sign-based updates (Bernstein et al. 2018): signsgd_update and signum_update.

Only the sign of the (rescaled, clipped) gradient or of its momentum moves the weight.
Weight decay follows MXNet: signsgd shrinks the weight by ``lr * wd``; signum folds ``wd``
into the momentum and shrinks the weight by ``lr * wd_lh`` (decoupled decay).

>>> import numpy as np
>>> from mxasync.operator.optimizer.signum import _signsgd, SignSGDParam
>>> _signsgd(np, SignSGDParam(lr=0.1), np.array([1.0, 1.0]), np.array([-3.0, 0.5]))
array([1.1, 0.9])
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..functional import defop
from ..params import OpParam
from .updates import _grad, _UpdateProperty

__all__: list[str] = []


class SignSGDParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "wd", "rescale_grad", "clip_gradient")  # MXNet's
    lr: float
    wd: float = 0.0
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0


class SignumParam(SignSGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient",
                                                   "wd_lh")  # MXNet's
    momentum: float = 0.0
    wd_lh: float = Field(0.0, description="decoupled weight decay applied to the weight itself")


def _signsgd(xp, p, w, g):
    return (1 - p.lr * p.wd) * w - p.lr * xp.sign(_grad(xp, p, g))


def _signum(xp, p, w, g, mom):
    mom *= p.momentum
    mom -= (1 - p.momentum) * (p.wd * w + _grad(xp, p, g))
    return (1 - p.lr * p.wd_lh) * w + p.lr * xp.sign(mom)


defop("signsgd_update", param=SignSGDParam, base=_UpdateProperty, arguments=("weight", "grad"), fwd=_signsgd,
      doc="SignSGD: ``weight = (1 - lr * wd) * weight - lr * sign(clip(rescale_grad * grad))``.")
defop("signum_update", param=SignumParam, base=_UpdateProperty, arguments=("weight", "grad", "mom"), mutates=(2,),
      fwd=_signum,
      doc="Signum: ``mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))``; "
          "``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)``; ``mom`` is updated in place.")
