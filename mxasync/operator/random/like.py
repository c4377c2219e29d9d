"""Samplers shaped like an input: ``_random_<dist>_like`` (uniform, normal, gamma, exponential, poisson,
negative_binomial, generalized_negative_binomial) draw an array of ``data``'s shape and dtype;
``_shuffle`` permutes ``data`` along its first axis. Both draw from the context's seeded RANDOM
resource; the gradient with respect to ``data`` is zero (its values are not used).

>>> import mxasync as mx
>>> mx.nd.random.uniform_like(mx.nd.zeros((2, 3)), low=2, high=3).shape
(2, 3)
"""

from __future__ import annotations

from pydantic import Field, create_model

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..params import NoParam, OpParam
from .distributions import _DISTS
from .samplers import _rng

__all__: list[str] = []

# distribution: (parameters with defaults, draw(rng, *params, size))
_LIKE = {
    "uniform": ((("low", 0.0), ("high", 1.0)), lambda rng, lo, hi, size: lo + (hi - lo) * rng.random(size)),
    "normal": ((("loc", 0.0), ("scale", 1.0)), lambda rng, mu, sigma, size: mu + sigma * rng.standard_normal(size)),
    **_DISTS,
}


# what each distribution parameter means (for the generated docstrings)
_MEANING = {
    ("uniform", "low"): "the lower bound of the interval", ("uniform", "high"): "the upper bound (excluded)",
    ("normal", "loc"): "the mean", ("normal", "scale"): "the standard deviation",
    ("exponential", "lam"): "the rate (1 / mean)", ("poisson", "lam"): "the mean number of events",
    ("gamma", "alpha"): "the shape", ("gamma", "beta"): "the scale",
    ("negative_binomial", "k"): "the number of failures until stopping",
    ("negative_binomial", "p"): "the success probability of each trial",
    ("generalized_negative_binomial", "mu"): "the mean",
    ("generalized_negative_binomial", "alpha"): "the dispersion (0: Poisson)",
}


class _LikeProperty(FunctionalProperty):
    """One input; the output has its shape and dtype."""

    def infer_shape(self, in_shapes):
        return list(in_shapes), [in_shapes[0]], []


def _like_draw(draw, names):
    def fwd(xp, p, op_ctx, data):
        values = [getattr(p, n) for n in names]
        return xp.asarray(draw(_rng(op_ctx), *values, tuple(data.shape))).astype(data.dtype)
    return fwd


def _no_grad(xp, p, og, ins, outs):
    return [None]


for _dist, (_params, _draw) in _LIKE.items():
    _names = tuple(n for n, _ in _params)
    _param = create_model(f"Random{_dist.title().replace('_', '')}LikeParam", __base__=OpParam,
                          **{n: (float, Field(d, description=_MEANING[(_dist, n)])) for n, d in _params})
    defop(f"_random_{_dist}_like", param=_param, base=_LikeProperty, wants_ctx=True, deps="og",
          fwd_res=(ResourceRequest.RANDOM,), fwd=_like_draw(_draw, _names),
          bwd=_no_grad, doc=f"Samples from the {_dist.replace('_', ' ')} distribution ({', '.join(_names)}) with "
                            "the shape and dtype of ``data``.")


def _shuffle(xp, p, op_ctx, data):
    if data.ndim == 0 or data.shape[0] < 2:
        return data.copy()
    perm = _rng(op_ctx).permutation(data.shape[0])
    return data[xp.asarray(perm)]


defop("_shuffle", param=NoParam, base=_LikeProperty, wants_ctx=True, deps="og", fwd_res=(ResourceRequest.RANDOM,),
      aliases=("shuffle",), fwd=_shuffle, bwd=_no_grad,
      doc="``data`` with its first axis randomly permuted (a copy).")
