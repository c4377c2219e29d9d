"""MXNet 1.9.1's fused LAMB: ``_multi_lamb_update`` and ``_multi_mp_lamb_update`` (float16 weights,
float32 ``mean``/``var``/``weight32``), both phases of ``lamb_update_phase1/2`` for up to 45 tensors
in one op. Per tensor ``i`` (``t = step_count[i]``; ``w`` the weight, or ``weight32`` when mixed)::

    g    = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g;   var = beta2 * var + (1 - beta2) * g^2
    d    = mean_hat / (sqrt(var_hat) + epsilon) + wd * w      (hats: / (1 - beta^t) with bias_correction)
    r1   = |weight| clamped to [lower_bound, upper_bound] (each when >= 0);  r2 = |d|
    w    = w - lr * (r1 / r2 if r1 and r2 are nonzero else 1) * d

``r1`` is the norm of the weight input itself (float16 in the mixed form), as MXNet computes it.
The mixed form writes the new ``weight32`` in place.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BeforeValidator

from ..params import Field, OpParam
from ..registry import register_op
from .grouped import GroupedUpdateProperty, write_result
from .multi_sgd import Floats

__all__ = ["MultiLAMBParam"]


def _to_ints(v: Any) -> Any:
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    if isinstance(v, (list, np.ndarray)):
        return tuple(int(x) for x in v)
    return v


class MultiLAMBParam(OpParam):
    positional_order: ClassVar[tuple[str, ...]] = (
        "learning_rates", "beta1", "beta2", "epsilon", "wds", "rescale_grad", "lower_bound", "upper_bound",
        "clip_gradient", "bias_correction", "step_count", "num_tensors")  # MXNet's
    learning_rates: Floats = Field(description="the learning rate of each tensor")
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-6
    wds: Floats
    rescale_grad: float = 1.0
    lower_bound: float = -1.0
    upper_bound: float = -1.0
    clip_gradient: float = -1.0
    bias_correction: bool = Field(True, description="divide the moments by (1 - beta^t)")
    step_count: Annotated[tuple[int, ...], BeforeValidator(_to_ints)] = Field(
        description="the step number of each tensor, counted from 1")
    num_tensors: int = Field(default=1, ge=1, description="the number of weights updated (at most 45)")


def _norm(xp, a) -> float:
    a = a.astype(xp.float32, copy=False).reshape(-1)
    return float(xp.sqrt(xp.dot(a, a)))


def _run(xp, p, in_data, req, out_data, per, mp):
    for i in range(p.num_tensors):
        group = in_data[per * i: per * i + per]
        weight, grad, mean, var = group[:4]
        w = group[4] if mp else weight
        g = grad.astype(mean.dtype, copy=False) * p.rescale_grad
        if p.clip_gradient >= 0:
            g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
        mean *= p.beta1
        mean += (1 - p.beta1) * g
        var *= p.beta2
        var += (1 - p.beta2) * g * g
        m, v = mean, var
        if p.bias_correction:
            t = p.step_count[i]
            m, v = mean / (1 - p.beta1 ** t), var / (1 - p.beta2 ** t)
        d = (m / (xp.sqrt(v) + p.epsilon) + p.wds[i] * w).astype(xp.float32, copy=False)
        r1, r2 = _norm(xp, weight), _norm(xp, d)
        if p.lower_bound >= 0:
            r1 = max(r1, p.lower_bound)
        if p.upper_bound >= 0:
            r1 = min(r1, p.upper_bound)
        ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
        new = (w - (p.learning_rates[i] * ratio) * d).astype(w.dtype, copy=False)
        if mp:
            w[...] = new
        write_result(weight, out_data[i], req[i], new.astype(weight.dtype, copy=False))


def multi_lamb_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 4, False)


def multi_mp_lamb_update(xp, p, in_data, req, out_data):
    _run(xp, p, in_data, req, out_data, 5, True)


class _MultiLambProperty(GroupedUpdateProperty):
    count_param = "num_tensors"
    key_var_num_args = "num_tensors"
    max_count = 45
    per_weight_params = ("learning_rates", "wds", "step_count")


@register_op("_multi_lamb_update", param=MultiLAMBParam,
             doc="Fused LAMB over ``num_tensors`` tensors (inputs weight_i, grad_i, mean_i, var_i; mean and var "
                 "updated in place): Adam direction with weight decay, scaled by the trust ratio |w| / |d|.")
class MultiLambUpdateProperty(_MultiLambProperty):
    names = ("weight", "grad", "mean", "var")
    kernel = staticmethod(multi_lamb_update)


@register_op("_multi_mp_lamb_update", param=MultiLAMBParam,
             doc="_multi_lamb_update on float32 master weights (inputs weight_i, grad_i, mean_i, var_i, weight32_i; "
                 "the last three float32 and updated in place); outputs in the weights' dtype.")
class MultiMpLambUpdateProperty(_MultiLambProperty):
    names = ("weight", "grad", "mean", "var", "weight32")
    float_names = mutated_names = ("mean", "var", "weight32")
    kernel = staticmethod(multi_mp_lamb_update)
