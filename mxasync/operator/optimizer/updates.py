"""Optimizer update ops: sgd_update, sgd_mom_update, nag_mom_update, adam_update, rmsprop_update,
rmspropalex_update, _sparse_adagrad_update (MXNet's name: ``mx.nd.sparse.adagrad_update``).

They write the new weight to their output (pass ``out=weight`` to update in
place) and update their state inputs in place; ``mutate_inputs()`` lists those,
so callers add the states' vars to the op's mutated vars.

>>> import numpy as np, mxasync as mx
>>> from mxasync.operator import get_op, OpContext
>>> from mxasync.operator.base import WRITE_INPLACE
>>> w, g, m = np.ones(2), np.ones(2), np.zeros(2)
>>> prop = get_op("sgd_mom_update").prepare(lr=0.1, momentum=0.9)
>>> prop.mutate_inputs()
[2]
>>> prop.forward_fn(mx.cpu())(OpContext(), [w, g, m], [WRITE_INPLACE], [w], []); w, m
(array([0.9, 0.9]), array([-0.1, -0.1]))
"""

from __future__ import annotations

from typing import ClassVar

from ..functional import FunctionalProperty, defop
from ..kernels import optimizer as _k
from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import OpParam

__all__: list[str] = []


class _UpdateProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = next((x for x in in_shapes if x is not None), None)
        for name, x in zip(self.list_arguments(), in_shapes, strict=False):
            if x is not None and s is not None and tuple(x) != tuple(s):
                raise self.error(f"{name} has shape {tuple(x)} but weight has {tuple(s)}")
        return [s] * len(in_shapes), [s], []

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]


class SGDParam(OpParam):
    lr: float
    wd: float = 0.0
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0
    lazy_update: bool = True


class SGDMomParam(SGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "lazy_update")  # MXNet's
    momentum: float = 0.0


class AdamParam(SGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "lazy_update")  # MXNet's
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8


class RMSPropParam(SGDParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")  # MXNet's
    gamma1: float = 0.95
    epsilon: float = 1e-8
    clip_weights: float = -1.0


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


def _grad(xp, p, g):
    """``clip(rescale_grad * g)`` in a new array (signum, ftrl, ftml and lamb share it)."""
    g = g * p.rescale_grad
    return xp.clip(g, -p.clip_gradient, p.clip_gradient) if p.clip_gradient >= 0 else g


def _target(w, out):
    """The array the in-place kernel updates: the weight itself under ``out=weight``, else the output
    (a copy of the weight written there) or a new copy."""
    if out is w:
        return w
    if out is None:
        return w.copy()
    out[...] = w
    return out


def _sgd(xp, p, w, g, out=None, run=PLAIN):
    w = _target(w, out)
    _k.sgd_update(xp, w, g, p.lr, p.wd, p.rescale_grad, p.clip_gradient, run=run)
    return w


def _sgd_mom(xp, p, w, g, mom, out=None, run=PLAIN):
    w = _target(w, out)
    _k.sgd_mom_update(xp, w, g, mom, p.lr, p.momentum, p.wd, p.rescale_grad, p.clip_gradient, run=run)
    return w


def _adam(xp, p, w, g, mean, var, out=None, run=PLAIN):
    w = _target(w, out)
    _k.adam_update(xp, w, g, mean, var, p.lr, p.beta1, p.beta2, p.epsilon, p.wd, p.rescale_grad, p.clip_gradient, run=run)
    return w


def _rmsprop(xp, p, w, g, n, out=None, run=PLAIN):
    w = _target(w, out)
    _k.rmsprop_update(xp, w, g, n, p.lr, p.gamma1, p.epsilon, p.wd, p.rescale_grad, p.clip_gradient,
                      p.clip_weights, run=run)
    return w


def _nag(xp, p, w, g, mom, out=None, run=PLAIN):
    w = _target(w, out)
    _k.nag_mom_update(xp, w, g, mom, p.lr, p.momentum, p.wd, p.rescale_grad, p.clip_gradient, run=run)
    return w


def _adagrad(xp, p, w, g, history, out=None, run=PLAIN):
    w = _target(w, out)
    _k.adagrad_update(xp, w, g, history, p.lr, p.epsilon, p.wd, p.rescale_grad, p.clip_gradient, run=run)
    return w


def _rmspropalex(xp, p, w, g, n, gbar, delta, out=None, run=PLAIN):
    w = _target(w, out)
    _k.rmspropalex_update(xp, w, g, n, gbar, delta, p.lr, p.gamma1, p.gamma2, p.epsilon, p.wd,
                          p.rescale_grad, p.clip_gradient, p.clip_weights, run=run)
    return w


defop("sgd_update", param=SGDParam, base=_UpdateProperty, arguments=("weight", "grad"), fwd=_sgd, fwd_out="inplace",
      doc="``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``.")
defop("sgd_mom_update", param=SGDMomParam, base=_UpdateProperty, arguments=("weight", "grad", "mom"), mutates=(2,),
      fwd=_sgd_mom, fwd_out="inplace", doc="SGD with momentum; ``mom`` is updated in place.")
defop("adam_update", param=AdamParam, base=_UpdateProperty, arguments=("weight", "grad", "mean", "var"),
      mutates=(2, 3), fwd=_adam, fwd_out="inplace", doc="Adam step (bias correction folded into lr by the optimizer); mean/var in place.")
defop("rmsprop_update", param=RMSPropParam, base=_UpdateProperty, arguments=("weight", "grad", "n"), mutates=(2,),
      fwd=_rmsprop, fwd_out="inplace", doc="RMSProp step; ``n`` updated in place.")
defop("nag_mom_update", param=NAGMomParam, base=_UpdateProperty, arguments=("weight", "grad", "mom"),
      mutates=(2,), fwd=_nag, fwd_out="inplace", doc="Nesterov momentum step (MXNet's NAG); ``mom`` is updated in place.")
defop("_sparse_adagrad_update", param=AdaGradParam, base=_UpdateProperty, arguments=("weight", "grad", "history"),
      mutates=(2,), fwd=_adagrad, fwd_out="inplace",
      doc="AdaGrad step: ``history += g^2``; ``w -= lr * (g / sqrt(history + epsilon) + wd * w)``.")
defop("rmspropalex_update", param=RMSPropAlexParam, base=_UpdateProperty,
      arguments=("weight", "grad", "n", "g", "delta"), mutates=(2, 3, 4), fwd=_rmspropalex, fwd_out="inplace",
      doc="Centred RMSProp (Graves 2013); ``n``, ``g`` and ``delta`` are updated in place.")
for _name, _fwd in (("sgd_update", _sgd), ("sgd_mom_update", _sgd_mom), ("adam_update", _adam),
                    ("rmsprop_update", _rmsprop), ("nag_mom_update", _nag), ("_sparse_adagrad_update", _adagrad),
                    ("rmspropalex_update", _rmspropalex)):
    register_numpy(_name, _fwd)  # block by block over cache-sized slices, on the kernel threads when big
