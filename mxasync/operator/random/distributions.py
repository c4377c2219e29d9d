"""More samplers, as MXNet 1.9: exponential, gamma, poisson, negative binomials, multinomial.

Two forms per distribution, drawing from the context's seeded RANDOM resource:

* ``_random_<dist>`` (``mx.nd.random_exponential`` ...): scalar parameters, output ``shape``;
* ``_sample_<dist>`` (``mx.nd.sample_gamma`` ...): parameters given as arrays of one shape
  ``S``; the output has shape ``S + shape``, one batch of draws per parameter element.

``_sample_multinomial`` draws category indices from the probabilities in the last axis.
Samplers have no gradient.

>>> import mxasync as mx
>>> mx.nd.sample_normal(mx.nd.array([0, 10]), mx.nd.array([1, 1]), shape=3).shape
(2, 3)
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from pydantic import create_model

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..params import DType, OpParam, OutShape
from .samplers import _dt, _rng, _SamplerProperty

__all__: list[str] = []


# distribution: (parameter names with defaults, draw(rng, *params, size) with numpy's parametrisation)
_DISTS = {
    "exponential": ((("lam", 1.0),), lambda rng, lam, size: rng.exponential(1.0 / np.asarray(lam), size)),
    "gamma": ((("alpha", 1.0), ("beta", 1.0)), lambda rng, a, b, size: rng.gamma(a, b, size)),
    "poisson": ((("lam", 1.0),), lambda rng, lam, size: rng.poisson(lam, size)),
    "negative_binomial": ((("k", 1.0), ("p", 1.0)), lambda rng, k, p, size: rng.negative_binomial(k, p, size)),
    # MXNet's generalised form: a gamma-Poisson mixture with mean mu and dispersion alpha
    "generalized_negative_binomial": (
        (("mu", 1.0), ("alpha", 1.0)),
        lambda rng, mu, alpha, size: _gen_neg_binomial(rng, np.asarray(mu), np.asarray(alpha), size)),
}


def _gen_neg_binomial(rng, mu, alpha, size):
    lam = np.where(alpha > 0, rng.gamma(1.0 / np.where(alpha > 0, alpha, 1.0), mu * alpha, size), mu)
    return rng.poisson(lam, size)


def _scalar_param(name: str, params: tuple) -> type[OpParam]:
    """The params of ``_random_<name>``: its scalar parameters, then shape/ctx/dtype as the other samplers."""
    fields = {p: (float, default) for p, default in params}
    return create_model(f"Random{name.title().replace('_', '')}Param", __base__=OpParam, **fields,
                        shape=(OutShape, ()), ctx=(str, ""), dtype=(Optional[DType], None))


class SampleParam(OpParam):
    shape: OutShape = ()
    dtype: Optional[DType] = None


class _SampleProperty(FunctionalProperty):
    """Array parameters of one shape ``S`` in, ``S + shape`` draws out."""

    def infer_shape(self, in_shapes):
        known = [s for s in in_shapes if s is not None]
        if not known:
            return list(in_shapes), [None], []
        first = tuple(known[0])
        for name, s in zip(self.list_arguments(), in_shapes, strict=False):
            if s is not None and tuple(s) != first:
                raise self.error(f"parameter arrays must have one shape: {self.list_arguments()[0]} {first}, "
                                 f"{name} {tuple(s)}")
        return [first] * len(in_shapes), [first + tuple(self.params.shape)], []

    def infer_type(self, in_types):
        t = next((x for x in in_types if x is not None), np.float32)
        dt = self.params.dtype
        return [t] * len(in_types), [t if dt in (None, "None") else dt], []


def _scalar_draw(draw, names):
    def fwd(xp, p, op_ctx):
        values = [getattr(p, n) for n in names]
        return xp.asarray(draw(_rng(op_ctx), *values, tuple(p.shape))).astype(_dt(p))
    return fwd


def _array_draw(draw):
    def fwd(xp, p, op_ctx, *params):
        host = [np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.float64) for a in params]
        extra = tuple(p.shape)
        expanded = [h.reshape(h.shape + (1,) * len(extra)) for h in host]
        size = host[0].shape + extra
        dtype = params[0].dtype if p.dtype in (None, "None") else p.dtype
        return xp.asarray(draw(_rng(op_ctx), *expanded, size)).astype(dtype)
    return fwd


for _dist, (_params, _draw) in _DISTS.items():
    _names = tuple(n for n, _ in _params)
    defop(f"_random_{_dist}", param=_scalar_param(_dist, _params), base=_SamplerProperty, arguments=(),
          wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,), aliases=(f"random_{_dist}",),
          fwd=_scalar_draw(_draw, _names),
          doc=f"Samples from the {_dist.replace('_', ' ')} distribution ({', '.join(_names)}).")
    defop(f"_sample_{_dist}", param=SampleParam, base=_SampleProperty, arguments=_names, wants_ctx=True,
          fwd_res=(ResourceRequest.RANDOM,), aliases=(f"sample_{_dist}",), fwd=_array_draw(_draw),
          doc=f"Samples from {_dist.replace('_', ' ')} distributions whose parameters ({', '.join(_names)}) "
              "are arrays: output shape = their shape + ``shape``.")

# uniform and normal with array parameters (the scalar forms live in random_ops)
defop("_sample_uniform", param=SampleParam, base=_SampleProperty, arguments=("low", "high"), wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("sample_uniform",),
      fwd=_array_draw(lambda rng, lo, hi, size: lo + (hi - lo) * rng.random(size)),
      doc="Samples from U[low, high) per element of the arrays low and high: output shape = their shape + shape.")
defop("_sample_normal", param=SampleParam, base=_SampleProperty, arguments=("mu", "sigma"), wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("sample_normal",),
      fwd=_array_draw(lambda rng, mu, sigma, size: mu + sigma * rng.standard_normal(size)),
      doc="Samples from N(mu, sigma**2) per element of the arrays mu and sigma: output shape = their shape + shape.")


class MultinomialParam(OpParam):
    shape: OutShape = ()
    get_prob: bool = False
    dtype: DType = "int32"


class _MultinomialProperty(FunctionalProperty):
    def list_outputs(self):
        return ["output", "prob"] if self.params.get_prob else ["output"]

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None] * len(self.list_outputs()), []
        out = (tuple(s[:-1]) + tuple(self.params.shape)) or (1,)  # no 0-d arrays in MXNet 1.x
        return [s], [out] * len(self.list_outputs()), []

    def infer_type(self, in_types):
        t = in_types[0] or np.float32
        return [t], [self.params.dtype] + ([t] if self.params.get_prob else []), []


def _multinomial(xp, p, op_ctx, data):
    probs = np.asarray(data.get() if hasattr(data, "get") else data, dtype=np.float64)
    flat = probs.reshape(-1, probs.shape[-1])
    n = int(np.prod(p.shape)) if p.shape else 1
    rng = _rng(op_ctx)
    cum = np.cumsum(flat, axis=1)
    draws = rng.random((flat.shape[0], n)) * cum[:, -1:]
    idx = np.minimum((cum[:, None, :] <= draws[:, :, None]).sum(axis=2), flat.shape[1] - 1)
    out_shape = (probs.shape[:-1] + tuple(p.shape)) or (1,)
    out = idx.reshape(out_shape).astype(p.dtype)
    if not p.get_prob:
        return xp.asarray(out)
    logp = np.log(np.take_along_axis(flat, idx, axis=1)).reshape(out_shape).astype(data.dtype)
    return [xp.asarray(out), xp.asarray(logp)]


defop("_sample_multinomial", param=MultinomialParam, base=_MultinomialProperty, wants_ctx=True,
      fwd_res=(ResourceRequest.RANDOM,), aliases=("sample_multinomial",), fwd=_multinomial,
      doc="Category indices drawn from the probabilities in the last axis of data; output shape = "
          "data's shape without its last axis + shape (and their log-probabilities with get_prob=True).")
