"""Follow-the-leader updates: ftml_update (FTML, Zheng & Kwok 2017) and ftrl_update (FTRL-Proximal,
McMahan et al. 2013). Their states are updated in place; the new weight is the output."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..functional import defop
from ..params import OpParam
from .signum import SignSGDParam
from .updates import _grad, _UpdateProperty

__all__: list[str] = []


class FTMLParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "beta1", "beta2", "epsilon", "t", "wd", "rescale_grad",
                                                   "clip_grad")  # MXNet's
    lr: float
    beta1: float = 0.6
    beta2: float = 0.999
    epsilon: float = 1e-8
    t: int = Field(description="the step number, counted from 1 (bias correction)")
    wd: float = 0.0
    rescale_grad: float = 1.0
    clip_grad: float = Field(-1.0, description="clip the decayed gradient to [-clip_grad, clip_grad] (negative: no clipping)")


class FtrlParam(SignSGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "lamda1", "beta", "wd", "rescale_grad",
                                                   "clip_gradient")  # MXNet's
    lamda1: float = Field(0.01, description="the L1 regularisation strength")
    beta: float = Field(1.0, description="added to sqrt(n) in the per-coordinate learning rate")


def _ftml(xp, p, w, g, d, v, z):
    # FTML's gradient includes weight decay before clipping (clip_grad < 0: no clipping)
    g = g * p.rescale_grad + p.wd * w
    if p.clip_grad >= 0:
        g = xp.clip(g, -p.clip_grad, p.clip_grad)
    v *= p.beta2
    v += (1 - p.beta2) * g * g
    d_t = (1 - p.beta1 ** p.t) / p.lr * (xp.sqrt(v / (1 - p.beta2 ** p.t)) + p.epsilon)
    z *= p.beta1
    z += (1 - p.beta1) * g - (d_t - p.beta1 * d) * w  # MXNet's kernel: (1 - beta1), not (1 - beta1^t)
    d[...] = d_t
    return -z / d_t


def _ftrl(xp, p, w, g, z, n):
    g = _grad(xp, p, g)
    z += g - (xp.sqrt(n + g * g) - xp.sqrt(n)) * w / p.lr
    n += g * g
    return (xp.sign(z) * p.lamda1 - z) / ((p.beta + xp.sqrt(n)) / p.lr + p.wd) * (xp.abs(z) > p.lamda1)


defop("ftml_update", param=FTMLParam, base=_UpdateProperty, arguments=("weight", "grad", "d", "v", "z"),
      mutates=(2, 3, 4), fwd=_ftml,
      doc="FTML step ``t``: ``v``, ``d`` and ``z`` are updated in place and ``weight = -z / d`` (``z`` takes "
          "``(1 - beta1) * grad`` as MXNet's kernel does).")
defop("ftrl_update", param=FtrlParam, base=_UpdateProperty, arguments=("weight", "grad", "z", "n"),
      mutates=(2, 3), fwd=_ftrl,
      doc="FTRL-Proximal: ``z`` and ``n`` are updated in place; ``weight = (sign(z) * lamda1 - z) / "
          "((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``.")
