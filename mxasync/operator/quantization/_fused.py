"""What the fused MKLDNN subgraph ops share: reading the subgraph they carry, their post-op
activations, and per-channel weight scales (MXNet's ``GetWeightScales``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..registry import get_op
from ._scales import F32, INT8_RANGE, INT32_MAX, max_abs

__all__ = ["Eltwise", "subgraph_ops", "eltwise_of", "apply_eltwise", "channel_weight_scales", "round_away"]


@dataclass(frozen=True)
class Eltwise:
    """A post-op activation: MKLDNN's algorithm name and its alpha (leaky slope, clip bound)."""

    alg: str
    alpha: float = 0.0

    def output_is_unsigned(self, extra_algs: tuple[str, ...] = ()) -> bool:
        """MXNet's ``IsOutputUInt8``: activations whose output is never negative."""
        return (self.alg == "relu" and self.alpha == 0.0) or self.alg in ("logistic", "soft_relu", "bounded_relu") \
            or self.alg in extra_algs


def subgraph_ops(op_name: str, text: str) -> list[tuple[str, object]]:
    """The (op name, validated params) of each op node of a subgraph's JSON, in graph order."""
    if not text:
        raise ValueError(f"{op_name}: the node carries no subgraph (MXNet's symbol JSON 'subgraphs' field)")
    out = []
    for node in json.loads(text)["nodes"]:
        if node["op"] != "null":
            attrs = node.get("attrs", node.get("param", {}))
            out.append((node["op"], get_op(node["op"]).prepare(**attrs).params))
    return out


_ACTIVATION = {"relu": "relu", "sigmoid": "logistic", "tanh": "tanh", "softrelu": "soft_relu", "softsign": "softsign"}
_ELTWISE_OPS = {"square": "square", "sqrt": "sqrt", "exp": "exp", "abs": "abs"}


def eltwise_of(op: str, params) -> Eltwise | None:
    """The post-op a subgraph node stands for (MXNet's ``GetMKLDNNActAlgo``), None for other ops."""
    if op == "Activation":
        return Eltwise(_ACTIVATION[params.act_type])
    if op == "LeakyReLU":
        if params.act_type != "leaky":
            return Eltwise(params.act_type)
        return Eltwise("relu", float(params.slope))
    if op == "clip":
        return Eltwise("bounded_relu", float(params.a_max))
    if op in _ELTWISE_OPS:
        return Eltwise(_ELTWISE_OPS[op])
    return None


def apply_eltwise(xp, x, e: Eltwise, alpha_scale=1.0):
    """``e`` applied to float ``x``; a bound (clip's a_max) in units scaled by ``alpha_scale``."""
    a = x.dtype.type(e.alpha)
    if e.alg == "relu":
        return xp.maximum(x, 0) if e.alpha == 0 else xp.where(x > 0, x, x * a)
    if e.alg == "bounded_relu":
        return xp.clip(x, 0, x.dtype.type(e.alpha * alpha_scale))
    if e.alg == "logistic":
        return 1 / (1 + xp.exp(-x))
    if e.alg == "soft_relu":
        return xp.logaddexp(x.dtype.type(0), x)
    if e.alg in ("tanh", "sqrt", "exp", "abs", "square"):
        return x * x if e.alg == "square" else getattr(xp, e.alg)(x)
    if e.alg == "softsign":
        return x / (1 + xp.abs(x))
    if e.alg == "elu":
        return xp.where(x > 0, x, a * (xp.exp(x) - 1))
    raise ValueError(f"fused activation {e.alg!r} is not supported")


def round_away(xp, x):
    """``std::round``: half away from zero."""
    return xp.sign(x) * xp.floor(xp.abs(x) + x.dtype.type(0.5))


def channel_weight_scales(xp, weight, bias, data_scale):
    """Per output channel: 127.5 over max|w| (2**31-1 for an all-zero channel), lowered where the
    int32 bias would pass 2**30 (MXNet's ``GetWeightScales`` with channel-wise scales)."""
    w = weight.reshape(weight.shape[0], -1)
    rng = np.maximum(np.abs(np.asarray(w.min(axis=1), F32)), np.abs(np.asarray(w.max(axis=1), F32)))
    with np.errstate(divide="ignore"):
        scales = np.where(rng > 0, INT8_RANGE / np.where(rng > 0, rng, F32(1)), F32(INT32_MAX)).astype(F32)
    if bias is not None:
        b = np.asarray(bias, F32)
        limit = np.where(b > 0, F32(INT32_MAX), F32(-2 ** 31)) / F32(2)
        with np.errstate(divide="ignore", invalid="ignore"):
            cap = (limit / np.where(b != 0, b, F32(1)) / F32(data_scale)).astype(F32)
        scales = np.where(b != 0, np.minimum(scales, cap), scales).astype(F32)
    return scales


def tensor_weight_scale(weight) -> tuple[np.float32, np.float32, np.float32]:
    """(scale, min, max) of the whole weight, as MXNet's tensor-wise ``GetWeightScales``."""
    lo, hi = F32(weight.min()), F32(weight.max())
    rng = max_abs(lo, hi)
    return (F32(INT8_RANGE / rng) if rng else F32(INT32_MAX)), lo, hi
