"""LAMB (You et al. 2019, layer-wise adaptive moments) as MXNet's two phases, and their
mixed-precision forms (float16 weight and gradient, float32 master weight and states).

Phase 1 updates ``mean``/``var`` in place and returns the step direction ``g``; the caller
takes the norms ``r1 = |weight|`` and ``r2 = |g|``; phase 2 scales the learning rate by the
trust ratio ``r1 / r2`` and writes the new weight.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from ..functional import defop
from ..params import OpParam
from .updates import _grad, _UpdateProperty

__all__: list[str] = []


class LambPhase1Param(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("beta1", "beta2", "epsilon", "t", "bias_correction", "wd",
                                                   "rescale_grad", "clip_gradient")  # MXNet's
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-6
    t: int = Field(description="the step number, counted from 1 (bias correction)")
    bias_correction: bool = Field(True, description="divide the moments by (1 - beta^t)")
    wd: float
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0


class LambPhase2Param(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "lower_bound", "upper_bound")  # MXNet's
    lr: float
    lower_bound: float = -1.0
    upper_bound: float = -1.0


class _Phase1Property(_UpdateProperty):
    def forward_inplace_option(self, in_data, out_data):
        return []  # the output is the step direction, not the weight


class _NormsShape:
    """Phase 2: weight, g (and weight32) share a shape; the norms r1, r2 have shape (1,)."""

    def infer_shape(self, in_shapes):
        s = next((x for i, x in enumerate(in_shapes) if x is not None and i not in (2, 3)), None)
        for i, x in enumerate(in_shapes):
            want = (1,) if i in (2, 3) else s
            if x is not None and want is not None and tuple(x) != tuple(want):
                raise self.error(f"{self.list_arguments()[i]} has shape {tuple(x)}, expected {want}")
        return [(1,) if i in (2, 3) else s for i in range(len(in_shapes))], [s], []


class _Phase2Property(_NormsShape, _UpdateProperty):
    pass


class MixedPrecisionProperty(_UpdateProperty):
    """The first ``n_low`` inputs have the weight's dtype (float16); states and the master weight
    (the last input) are float32; the output has the weight's dtype, or with ``float_out`` the
    master weight's."""

    n_low: ClassVar[int] = 2
    float_out: ClassVar[bool] = False

    def infer_type(self, in_types):
        t = in_types[0] if in_types[0] is not None else np.float16
        n = len(self.list_arguments())
        master = in_types[-1] if in_types[-1] is not None and self.n_low < n else np.float32
        ins = [t] * self.n_low + [master] * (n - self.n_low)
        return ins, [master if self.float_out else t], []


class _MixedPhase1Property(MixedPrecisionProperty):
    float_out = True  # g is computed against the float32 master weight

    def forward_inplace_option(self, in_data, out_data):
        return []


class _MixedPhase2Property(_NormsShape, MixedPrecisionProperty):
    n_low = 1  # g, r1, r2 are float32


def _phase1(xp, p, w, g, mean, var):
    return _moments(xp, p, w, _grad(xp, p, g), mean, var)


def _moments(xp, p, w, g, mean, var):
    mean *= p.beta1
    mean += (1 - p.beta1) * g
    var *= p.beta2
    var += (1 - p.beta2) * g * g
    if p.bias_correction:
        m_hat = mean / (1 - p.beta1 ** p.t)
        v_hat = var / (1 - p.beta2 ** p.t)
        return m_hat / (xp.sqrt(v_hat) + p.epsilon) + p.wd * w
    return mean / (xp.sqrt(var) + p.epsilon) + p.wd * w


def _trust_lr(xp, p, r1, r2):
    r1 = float(r1.reshape(-1)[0])
    r2 = float(r2.reshape(-1)[0])
    if p.lower_bound >= 0:
        r1 = max(r1, p.lower_bound)
    if p.upper_bound >= 0:
        r1 = min(r1, p.upper_bound)
    return p.lr if r1 == 0 or r2 == 0 else p.lr * r1 / r2


def _phase2(xp, p, w, g, r1, r2):
    return w - _trust_lr(xp, p, r1, r2) * g


def _mp_phase1(xp, p, w, g, mean, var, w32):
    # MXNet rounds the rescaled gradient to the gradient's dtype before clipping
    g = (g.astype(xp.float32) * p.rescale_grad).astype(g.dtype).astype(xp.float32)
    if p.clip_gradient >= 0:
        g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
    return _moments(xp, p, w32, g, mean, var)


def _mp_phase2(xp, p, w, g, r1, r2, w32):
    # MXNet 1.9.1 reads weight32 but leaves it as it was: only the output is new
    return (w32 - _trust_lr(xp, p, r1, r2) * g).astype(w.dtype)




defop("lamb_update_phase1", param=LambPhase1Param, base=_Phase1Property,
      arguments=("weight", "grad", "mean", "var"), mutates=(2, 3), fwd=_phase1,
      doc="LAMB phase 1: ``mean``/``var`` updated in place (Adam moments of clip(rescale_grad * grad)); returns "
          "``g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight`` (bias-corrected when bias_correction).")
defop("lamb_update_phase2", param=LambPhase2Param, base=_Phase2Property, arguments=("weight", "g", "r1", "r2"),
      fwd=_phase2,
      doc="LAMB phase 2: ``weight - lr * (r1 / r2) * g`` with ``r1`` clamped to [lower_bound, upper_bound] when "
          "they are >= 0, and plain ``lr`` when r1 or r2 is 0.")
defop("mp_lamb_update_phase1", param=LambPhase1Param, base=_MixedPhase1Property,
      arguments=("weight", "grad", "mean", "var", "weight32"), mutates=(2, 3), fwd=_mp_phase1,
      doc="lamb_update_phase1 on the float32 master weight ``weight32`` (float16 weight and grad).")
defop("mp_lamb_update_phase2", param=LambPhase2Param, base=_MixedPhase2Property,
      arguments=("weight", "g", "r1", "r2", "weight32"), fwd=_mp_phase2,
      doc="lamb_update_phase2 from the float32 master weight, cast to the weight's dtype; as in MXNet 1.9.1, "
          "``weight32`` itself is not written (the LAMB optimizer updates it).")
