"""More optimizer update ops: nag_mom_update, adagrad_update, rmspropalex_update.

Same contract as :mod:`.optimizer_ops`: the new weight goes to the output
(``out=weight`` updates in place) and the state inputs are updated in place
(``mutate_inputs()``).  The math lives in :mod:`.kernels.optimizer`, whose
kernels update in place; here they run on a copy of the weight so that the
input weight is left alone when the output is another array.

>>> import numpy as np, mxasync as mx
>>> from mxasync.operator import get_op, OpContext, WRITE_INPLACE
>>> w, g, h = np.ones(2), np.ones(2), np.zeros(2)
>>> prop = get_op("adagrad_update").prepare(lr=0.1, epsilon=0.0)
>>> prop.mutate_inputs()
[2]
>>> prop.forward_fn(mx.cpu())(OpContext(), [w, g, h], [WRITE_INPLACE], [w], []); w, h
(array([0.9, 0.9]), array([1., 1.]))
"""

from __future__ import annotations

from typing import ClassVar

from .functional import defop
from .kernels import optimizer as _k
from .optimizer_ops import SGDParam, _UpdateProperty

__all__: list[str] = []


class NAGMomParam(SGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient")  # MXNet's
    momentum: float = 0.0


class AdaGradParam(SGDParam):
    epsilon: float = 1e-7


class RMSPropAlexParam(SGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")  # MXNet's
    gamma1: float = 0.95
    gamma2: float = 0.9
    epsilon: float = 1e-8
    clip_weights: float = -1.0


def _nag(xp, p, w, g, mom):
    w = w.copy()
    _k.nag_mom_update(xp, w, g, mom, p.lr, p.momentum, p.wd, p.rescale_grad, p.clip_gradient)
    return w


def _adagrad(xp, p, w, g, history):
    w = w.copy()
    _k.adagrad_update(xp, w, g, history, p.lr, p.epsilon, p.wd, p.rescale_grad, p.clip_gradient)
    return w


def _rmspropalex(xp, p, w, g, n, gbar, delta):
    w = w.copy()
    _k.rmspropalex_update(xp, w, g, n, gbar, delta, p.lr, p.gamma1, p.gamma2, p.epsilon, p.wd,
                          p.rescale_grad, p.clip_gradient, p.clip_weights)
    return w


defop("nag_mom_update", param=NAGMomParam, base=_UpdateProperty, arguments=("weight", "grad", "mom"),
      mutates=(2,), fwd=_nag, doc="Nesterov momentum step (MXNet's NAG); ``mom`` is updated in place.")
defop("adagrad_update", param=AdaGradParam, base=_UpdateProperty, arguments=("weight", "grad", "history"),
      mutates=(2,), fwd=_adagrad,
      doc="AdaGrad step: ``history += g^2``; ``w -= lr * (g / sqrt(history + epsilon) + wd * w)``.")
defop("rmspropalex_update", param=RMSPropAlexParam, base=_UpdateProperty,
      arguments=("weight", "grad", "n", "g", "delta"), mutates=(2, 3, 4), fwd=_rmspropalex,
      doc="Centred RMSProp (Graves 2013); ``n``, ``g`` and ``delta`` are updated in place.")
