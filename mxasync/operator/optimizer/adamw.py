"""AdamW (Loshchilov and Hutter, decoupled weight decay) as MXNet 1.9.1's four update ops:
``_adamw_update``, ``_mp_adamw_update`` (float16 weight, float32 master ``weight32``),
``_multi_adamw_update`` and ``_multi_mp_adamw_update`` (``num_weights`` groups in one op).

Per weight, with ``g = clip(rescale_grad * grad, clip_gradient)``::

    mean = beta1 * mean + (1 - beta1) * g
    var  = beta2 * var + (1 - beta2) * g^2
    w    = w - eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)

``rescale_grad`` is an input array (its first element is read), not a param: when it is NaN,
infinite or 0 the whole update is skipped (states untouched; the output gets the weight as it
was, where MXNet leaves it unwritten). As in MXNet, ``_adamw_update`` (only it) also leaves the
rescaled, clipped gradient in its ``grad`` input. ``mx.nd.contrib.adamw_update`` and friends take a number
for it as MXNet's wrappers do.

>>> import mxasync as mx
>>> w, g, m, v = mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
>>> _ = mx.nd._internal._adamw_update(w, g, m, v, mx.nd.array([1.0]), lr=0.1, eta=1.0, out=w)
>>> w.asnumpy().round(4), m.asnumpy().round(4)
(array([0.6838, 0.6838], dtype=float32), array([0.1, 0.1], dtype=float32))
"""

from __future__ import annotations

import math
from typing import ClassVar

from ..params import Field, OpParam
from ..registry import register_op
from .grouped import GroupedUpdateProperty, host_scalar, write_result
from .multi_sgd import Floats

__all__ = ["AdamWParam", "MultiAdamWParam"]


class AdamWParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lr", "beta1", "beta2", "epsilon", "wd", "eta",
                                                   "clip_gradient")  # MXNet's
    lr: float = Field(description="the learning rate")
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    wd: float = 0.0
    eta: float = Field(description="the learning rate schedule multiplier")
    clip_gradient: float = -1.0


class MultiAdamWParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = ("lrs", "beta1", "beta2", "epsilon", "wds", "etas",
                                                   "clip_gradient", "num_weights")  # MXNet's
    lrs: Floats
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    wds: Floats
    etas: Floats = Field(description="the learning rate schedule multiplier of each weight")
    clip_gradient: float = -1.0
    num_weights: int = Field(default=1, ge=1)


def rescale_or_skip(value) -> float | None:
    """The rescale factor, or None when MXNet skips the update (NaN, infinite or 0)."""
    r = host_scalar(value)
    return None if not math.isfinite(r) or r == 0 else r


def adamw_step(xp, w, g, mean, var, rescale, lr, wd, eta, p, grad_in_place=False):
    """Update ``mean``/``var`` in place; return the new weight (in the dtype of ``mean``). With
    ``grad_in_place`` the rescaled, clipped gradient is written back into ``g``, as MXNet's
    single-precision ``_adamw_update`` does."""
    g = g.astype(mean.dtype, copy=False) * rescale if not grad_in_place else g.__imul__(rescale)
    if p.clip_gradient >= 0:
        g = xp.clip(g, -p.clip_gradient, p.clip_gradient, out=g if grad_in_place else None)
    mean *= p.beta1
    mean += (1 - p.beta1) * g
    var *= p.beta2
    var += (1 - p.beta2) * g * g
    w = w.astype(mean.dtype, copy=False)
    return w - eta * (lr * mean / (xp.sqrt(var) + p.epsilon) + wd * w)


def _run(xp, p, in_data, req, out_data, per, mp, lrs, wds, etas, in_place_grad=False):
    rescale = rescale_or_skip(in_data[-1])
    for i in range(len(out_data)):
        group = in_data[per * i: per * i + per]
        w, g, mean, var = group[:4]
        if rescale is None:
            write_result(w, out_data[i], req[i], w)
            continue
        master = group[4] if mp else w
        new = adamw_step(xp, master, g, mean, var, rescale, lrs[i], wds[i], etas[i], p, in_place_grad)
        if mp:
            master[...] = new
        write_result(w, out_data[i], req[i], new.astype(w.dtype, copy=False))


def adamw_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 4, False, (p.lr,), (p.wd,), (p.eta,), in_place_grad=True)


def mp_adamw_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 5, True, (p.lr,), (p.wd,), (p.eta,))


def multi_adamw_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 4, False, p.lrs, p.wds, p.etas)


def multi_mp_adamw_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 5, True, p.lrs, p.wds, p.etas)


_RULE = ("``mean = beta1*mean + (1-beta1)*g``, ``var = beta2*var + (1-beta2)*g^2``, "
         "``w -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)`` with ``g = clip(rescale_grad * grad)``; "
         "the update is skipped when rescale_grad (an input array) is NaN, infinite or 0.")
_MP = ("weight", "grad", "mean", "var", "weight32")
_FLOAT = ("mean", "var", "weight32")
_OPS = {
    # name: (param, names, mixed precision, fused, kernel)
    "_adamw_update": (AdamWParam, _MP[:4], False, False, adamw_update),
    "_mp_adamw_update": (AdamWParam, _MP, True, False, mp_adamw_update),
    "_multi_adamw_update": (MultiAdamWParam, _MP[:4], False, True, multi_adamw_update),
    "_multi_mp_adamw_update": (MultiAdamWParam, _MP, True, True, multi_mp_adamw_update),
}

for _name, (_param, _names, _mp, _fused, _kernel) in _OPS.items():
    _attrs = dict(names=_names, trailing=("rescale_grad",), kernel=staticmethod(_kernel), __module__=__name__,
                  mutated_names=_FLOAT if _mp else ("mean", "var"), float_names=_FLOAT if _mp else ())
    if not _fused:
        _attrs["arguments"] = (*_names, "rescale_grad")
    else:
        _attrs.update(count_param="num_weights", key_var_num_args="num_weights",
                      per_weight_params=("lrs", "wds", "etas"))
    _doc = (("Fused " if _fused else "") + "AdamW step" + (" on float32 master weights weight32 (updated in place)"
                                                           if _mp else "") + ": " + _RULE)
    register_op(_name, param=_param, doc=_doc)(type(_name.title().replace("_", "") + "Property",
                                                    (GroupedUpdateProperty,), _attrs))
