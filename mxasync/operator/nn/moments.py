"""``moments``: the mean and the (population) variance over ``axes`` (MXNet's src/operator/nn/moments.cc).

>>> import mxasync as mx
>>> mean, var = mx.nd.moments(mx.nd.array([[0, 1, 2], [3, 4, 5]]), axes=(1,))
>>> mean.asnumpy(), var.asnumpy()
(array([1., 4.], dtype=float32), array([0.6666667, 0.6666667], dtype=float32))
"""

from __future__ import annotations

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["MomentsParam"]


class MomentsParam(OpParam):
    axes: tuple[int, ...] | None = None
    keepdims: bool = False


def _axes(p, ndim):
    return tuple(range(ndim)) if p.axes is None else tuple(a % ndim for a in p.axes)


class _MomentsProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None, None], []
        p = self.params
        for a in p.axes or ():
            if not -len(s) <= a < len(s):
                raise self.error(f"axes={p.axes}: axis {a} is out of range for data of shape {tuple(s)}")
        axes = _axes(p, len(s))
        out = tuple(1 if i in axes else d for i, d in enumerate(s)) if p.keepdims else \
            tuple(d for i, d in enumerate(s) if i not in axes)
        return [s], [out, out], []


def _moments(xp, p, x):
    axes = _axes(p, x.ndim)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=p.keepdims)
    return (mean if p.keepdims else mean.reshape(var.shape)), var


def _moments_bwd(xp, p, og, ins, outs):
    x = ins[0]
    axes = _axes(p, x.ndim)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    n = 1
    for a in axes:
        n *= x.shape[a]
    mean = outs[0].reshape(kept)
    g_mean, g_var = og[0].reshape(kept), og[1].reshape(kept)
    return [(g_mean + 2 * g_var * (x - mean)) / n]


defop("moments", param=MomentsParam, base=_MomentsProperty, outputs=("mean", "var"), deps="og,in,out",
      fwd=_moments, bwd=_moments_bwd,
      doc="The mean and the variance (divided by N) of ``data`` over ``axes`` (all axes when None).")
