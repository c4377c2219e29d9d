"""Normalisation ops without running statistics: InstanceNorm and L2Normalization.

Both recompute what backward needs from the input (nothing is stored), so they
keep only ``data`` (and ``gamma``) for the backward pass.

>>> import numpy as np
>>> from mxasync.operator.nn.instance_l2_norm import l2_normalize
>>> l2_normalize(np, np.array([[3., 4.], [1., 0.]]), "instance", 1e-10)
array([[0.6, 0.8],
       [1. , 0. ]])
"""

from __future__ import annotations

from typing import Literal

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["InstanceNormParam", "L2NormalizationParam", "l2_normalize"]


class InstanceNormParam(OpParam):
    eps: float = 1e-3


def _spatial(ndim):
    return tuple(range(2, ndim))


def _bcast(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


class _InstanceNormProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        if len(d) < 3:
            raise self.error(f"data has shape {tuple(d)}; InstanceNorm needs (N, C, spatial...) with 3 or more axes")
        c = (d[1],)
        for name, s in zip(("gamma", "beta"), in_shapes[1:], strict=False):
            if s is not None and tuple(s) != c:
                raise self.error(f"{name} has shape {tuple(s)} but data {tuple(d)} has {c[0]} channels")
        return [d, c, c], [d], []


def _instance_stats(xp, p, x):
    axes = _spatial(x.ndim)
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    inv = 1.0 / xp.sqrt((xc * xc).mean(axis=axes, keepdims=True) + p.eps)
    return xc * inv, inv


def _instance_norm(xp, p, x, gamma, beta):
    xhat, _ = _instance_stats(xp, p, x)
    return xhat * _bcast(gamma, x.ndim) + _bcast(beta, x.ndim)


def _instance_norm_bwd(xp, p, og, ins, outs):
    x, gamma, _ = ins
    g = og[0]
    axes = _spatial(x.ndim)
    xhat, inv = _instance_stats(xp, p, x)
    gx = g * _bcast(gamma, x.ndim)
    gdata = inv * (gx - gx.mean(axis=axes, keepdims=True) - xhat * (gx * xhat).mean(axis=axes, keepdims=True))
    red = (0,) + axes
    return [gdata, (g * xhat).sum(axis=red), g.sum(axis=red)]


defop("InstanceNorm", param=InstanceNormParam, base=_InstanceNormProperty, arguments=("data", "gamma", "beta"),
      deps="og,in", fwd=_instance_norm, bwd=_instance_norm_bwd,
      doc="Normalise each (sample, channel) over its spatial axes, then scale by ``gamma`` and shift by "
          "``beta`` (per channel).")


class L2NormalizationParam(OpParam):
    eps: float = 1e-10
    mode: Literal["instance", "channel", "spatial"] = "instance"


def _l2_axes(mode, ndim):
    if mode == "instance":
        return tuple(range(1, ndim))
    if mode == "channel":
        return (1,)
    return tuple(range(2, ndim))


def _l2_norm(xp, x, mode, eps):
    return xp.sqrt((x * x).sum(axis=_l2_axes(mode, x.ndim), keepdims=True) + eps)


def l2_normalize(xp, x, mode: str, eps: float):
    """``x / sqrt(sum(x**2) + eps)``, summing over all but axis 0 (instance), axis 1 (channel) or the
    axes after 1 (spatial)."""
    return x / _l2_norm(xp, x, mode, eps)


class _L2Property(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        mode = self.params.mode
        need = 2 if mode == "instance" else 3
        if len(d) < need:
            raise self.error(f"data has shape {tuple(d)}; mode={mode!r} needs {need} or more axes")
        return [d], [d], []


def _l2_bwd(xp, p, og, ins, outs):
    x = ins[0]
    n = _l2_norm(xp, x, p.mode, p.eps)
    y = x / n
    g = og[0]
    return [(g - y * (g * y).sum(axis=_l2_axes(p.mode, x.ndim), keepdims=True)) / n]


defop("L2Normalization", param=L2NormalizationParam, base=_L2Property, deps="og,in",
      fwd=lambda xp, p, x: l2_normalize(xp, x, p.mode, p.eps), bwd=_l2_bwd,
      doc="Divide by the L2 norm: per sample (instance), per position across channels (channel) or per "
          "channel across positions (spatial); ``eps`` is added under the square root.")
