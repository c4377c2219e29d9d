"""LayerNorm and GroupNorm: normalisation by statistics of each sample (no running state).

Outputs are ``output, mean, std`` as in MXNet 1.9; ``mean``/``std`` are visible only with
``output_mean_var`` and carry no gradient.  Backward reads the saved ``mean``/``std``
instead of recomputing them.  ``std`` is ``sqrt(var + eps)``.

>>> from mxasync.operator import get_op
>>> get_op("LayerNorm").prepare(axis=1).infer_shape([(2, 4, 3), None, None])
([(2, 4, 3), (4,), (4,)], [(2, 4, 3), (2, 1, 3), (2, 1, 3)], [])
>>> get_op("GroupNorm").prepare(num_groups=2).infer_shape([(2, 4, 3), None, None])
([(2, 4, 3), (2,), (2,)], [(2, 4, 3), (2, 2), (2, 2)], [])
"""

from __future__ import annotations

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam

__all__ = ["LayerNormParam", "GroupNormParam", "layer_norm", "group_norm"]


_MEAN_STD = "also output the mean and the std (no gradient flows through them)"


class LayerNormParam(OpParam):
    axis: int = Field(default=-1, description="the axis to normalise along (negative counts from the end)")
    eps: float = 1e-5
    output_mean_var: bool = Field(default=False, description=_MEAN_STD)


class GroupNormParam(OpParam):
    num_groups: int = Field(default=1, gt=0, description="how many groups the channels (axis 1) are split into")
    eps: float = 1e-5
    output_mean_var: bool = Field(default=False, description=_MEAN_STD)


class _MeanStdProperty(FunctionalProperty):
    def num_visible_outputs(self) -> int:
        return 3 if self.params.output_mean_var else 1

    def _check_params(self, in_shapes, want):
        for name, s in zip(("gamma", "beta"), in_shapes[1:], strict=False):
            if s is not None and tuple(s) != want:
                raise self.error(f"{name} has shape {tuple(s)} but data {tuple(in_shapes[0])} needs {want}")


class _LayerNormProperty(_MeanStdProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None] * 3, []
        axis = self.params.axis
        if not -len(d) <= axis < len(d):
            raise self.error(f"axis={axis} is out of range for data of shape {tuple(d)}")
        ax = axis % len(d)
        want = (d[ax],)
        self._check_params(in_shapes, want)
        stat = tuple(1 if i == ax else n for i, n in enumerate(d))
        return [tuple(d), want, want], [tuple(d), stat, stat], []


class _GroupNormProperty(_MeanStdProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None] * 3, []
        g = self.params.num_groups
        if len(d) < 2 or d[1] % g:
            raise self.error(f"data has shape {tuple(d)}; GroupNorm needs (N, C, ...) with C divisible by "
                             f"num_groups={g}")
        want = (g,)
        self._check_params(in_shapes, want)
        return [tuple(d), want, want], [tuple(d), (d[0], g), (d[0], g)], []


def _normalise(xp, x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    std = xp.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    return xc / std, mean, std


def _norm_backward(g_hat, xhat, std, axes):
    """Gradient of ``xhat = (x - mean) / std`` given the gradient ``g_hat`` w.r.t. ``xhat``."""
    return (g_hat - g_hat.mean(axis=axes, keepdims=True)
            - xhat * (g_hat * xhat).mean(axis=axes, keepdims=True)) / std


def _along(v, ndim, ax):
    return v.reshape(tuple(-1 if i == ax else 1 for i in range(ndim)))


def layer_norm(xp, p, x, gamma, beta):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``p.axis``; returns output, mean, std."""
    ax = p.axis % x.ndim
    xhat, mean, std = _normalise(xp, x, (ax,), p.eps)
    out = xhat * _along(gamma, x.ndim, ax) + _along(beta, x.ndim, ax)
    return out.astype(x.dtype, copy=False), mean.astype(x.dtype, copy=False), std.astype(x.dtype, copy=False)


def _layer_norm_bwd(xp, p, og, ins, outs):
    x, gamma, _ = ins
    mean, std = outs[1], outs[2]
    ax = p.axis % x.ndim
    g = og[0]
    xhat = (x - mean) / std
    others = tuple(i for i in range(x.ndim) if i != ax)
    gdata = _norm_backward(g * _along(gamma, x.ndim, ax), xhat, std, (ax,))
    return [gdata, (g * xhat).sum(axis=others), g.sum(axis=others)]


def _grouped(x, groups):
    return x.reshape((x.shape[0], groups, -1))


def group_norm(xp, p, x, gamma, beta):
    """Normalise each (sample, group of C/num_groups channels); ``gamma``/``beta`` hold one value per group."""
    xg = _grouped(x, p.num_groups)
    xhat, mean, std = _normalise(xp, xg, (2,), p.eps)
    out = (xhat * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)).reshape(x.shape)
    return out.astype(x.dtype, copy=False), mean[..., 0].astype(x.dtype), std[..., 0].astype(x.dtype)


def _group_norm_bwd(xp, p, og, ins, outs):
    x, gamma, _ = ins
    mean, std = outs[1][..., None], outs[2][..., None]
    xg = _grouped(x, p.num_groups)
    g = _grouped(og[0], p.num_groups)
    xhat = (xg - mean) / std
    gdata = _norm_backward(g * gamma.reshape(1, -1, 1), xhat, std, (2,)).reshape(x.shape)
    return [gdata, (g * xhat).sum(axis=(0, 2)), g.sum(axis=(0, 2))]


defop("LayerNorm", param=LayerNormParam, base=_LayerNormProperty, arguments=("data", "gamma", "beta"),
      outputs=("output", "mean", "std"), deps="og,in,out", fwd=layer_norm, bwd=_layer_norm_bwd,
      doc="Normalise along ``axis`` (default the last) by each position's mean and standard deviation, then "
          "scale by ``gamma`` and shift by ``beta`` (both of data's size on ``axis``). With "
          "``output_mean_var`` the mean and std (``sqrt(var + eps)``) are outputs too (no gradient flows "
          "through them).")

defop("GroupNorm", param=GroupNormParam, base=_GroupNormProperty, arguments=("data", "gamma", "beta"),
      outputs=("output", "mean", "std"), deps="og,in,out", fwd=group_norm, bwd=_group_norm_bwd,
      doc="Split the channels (axis 1) into ``num_groups`` groups and normalise each (sample, group) over "
          "its channels and positions; ``gamma``/``beta`` have one value per group (MXNet 1.9's shape "
          "``(num_groups,)``). With ``output_mean_var`` the (N, num_groups) mean and std are outputs too.")
