"""Densities of samples: ``_random_pdf_<dist>`` (``mx.nd.random_pdf_normal`` ...), as MXNet 1.9.

``random_pdf_<dist>(sample, *params, is_log=False)`` gives the density (the probability for the
discrete ones) of each sample under the distribution whose parameters sit at the same leading
index: the parameter arrays share one shape ``S`` and ``sample`` has shape ``S + extra``; the
output has ``sample``'s shape.  ``random_pdf_dirichlet`` takes ``alpha`` of shape ``S + (k,)`` and
``sample`` of ``S + extra + (k,)``; its output drops the last axis.  No support check is made
(as in MXNet: the uniform density is ``1 / (high - low)`` everywhere).

Gradients go to the sample (continuous distributions; zero for poisson and the negative
binomials) and to every parameter, summed over the ``extra`` axes.  The gamma distribution
takes ``beta`` as a *rate* here (MXNet's density, unlike its sampler's scale).

>>> import mxasync as mx
>>> mx.nd.random_pdf_normal(mx.nd.array([[0.0, 1.0]]), mx.nd.array([0.0]), mx.nd.array([1.0])).asnumpy().round(4)
array([[0.3989, 0.242 ]], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam
from ..tensor.special import digamma, gammaln

__all__: list[str] = []

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


class PdfParam(OpParam):
    is_log: bool = Field(False, description="give the log of the density instead of the density")


# Each family: lpdf(xp, x, *params) and grad(xp, x, *params) -> [d lpdf / d sample (None: zero), d / d param...]

def _uniform(xp, x, lo, hi):
    return xp.broadcast_to(-xp.log(hi - lo), x.shape)


def _uniform_grad(xp, x, lo, hi):
    inv = 1.0 / (hi - lo)
    return [None, xp.broadcast_to(inv, x.shape), xp.broadcast_to(-inv, x.shape)]


def _normal(xp, x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - xp.log(sigma) - _HALF_LOG_2PI


def _normal_grad(xp, x, mu, sigma):
    sq = sigma * sigma
    d = x - mu
    return [-d / sq, d / sq, (d * d - sq) / (sq * sigma)]


def _gamma(xp, x, a, b):
    return a * xp.log(b) + (a - 1) * xp.log(x) - b * x - gammaln(xp, a)


def _gamma_grad(xp, x, a, b):
    return [(a - 1) / x - b, xp.log(x) + xp.log(b) - digamma(xp, a), a / b - x]


def _exponential(xp, x, lam):
    return xp.log(lam) - lam * x


def _exponential_grad(xp, x, lam):
    return [xp.broadcast_to(-lam, x.shape), 1.0 / lam - x]


def _poisson(xp, x, lam):
    return x * xp.log(lam) - gammaln(xp, x + 1) - lam


def _poisson_grad(xp, x, lam):
    return [None, x / lam - 1]


def _negative_binomial(xp, x, k, p):
    return (gammaln(xp, x + k) - gammaln(xp, x + 1) - gammaln(xp, k) + k * xp.log(p) + x * xp.log1p(-p))


def _negative_binomial_grad(xp, x, k, p):
    return [None, digamma(xp, x + k) - digamma(xp, k) + xp.log(p), k / p - x / (1 - p)]


def _gen_nb(mu, alpha):
    """MXNet's mean/dispersion form: the negative binomial with k = 1 / alpha, p = 1 / (mu * alpha + 1)."""
    return 1.0 / alpha, 1.0 / (mu * alpha + 1.0)


def _generalized_negative_binomial(xp, x, mu, alpha):
    return _negative_binomial(xp, x, *_gen_nb(mu, alpha))


def _generalized_negative_binomial_grad(xp, x, mu, alpha):
    k, p = _gen_nb(mu, alpha)
    _, dk, dp = _negative_binomial_grad(xp, x, k, p)
    dp_dmu = -alpha * p * p      # p = 1 / (mu alpha + 1)
    dp_dalpha = -mu * p * p
    dk_dalpha = -k * k           # k = 1 / alpha
    return [None, dp * dp_dmu, dk * dk_dalpha + dp * dp_dalpha]


def _dirichlet(xp, x, alpha):
    return (((alpha - 1) * xp.log(x)).sum(axis=-1) + gammaln(xp, alpha.sum(axis=-1))
            - gammaln(xp, alpha).sum(axis=-1))


def _dirichlet_grad(xp, x, alpha):
    total = digamma(xp, alpha.sum(axis=-1, keepdims=True))
    return [(alpha - 1) / x, xp.log(x) + total - digamma(xp, alpha)]


# name: (parameter names with what they mean, lpdf, grad)
_FAMILIES = {
    "uniform": ((("low", "lower bounds"), ("high", "upper bounds")), _uniform, _uniform_grad),
    "normal": ((("mu", "means"), ("sigma", "standard deviations")), _normal, _normal_grad),
    "gamma": ((("alpha", "shapes"), ("beta", "rates")), _gamma, _gamma_grad),
    "exponential": ((("lam", "rates"),), _exponential, _exponential_grad),
    "poisson": ((("lam", "rates (means)"),), _poisson, _poisson_grad),
    "negative_binomial": ((("k", "numbers of failures until stopping"), ("p", "success probabilities")),
                          _negative_binomial, _negative_binomial_grad),
    "generalized_negative_binomial": ((("mu", "means"), ("alpha", "dispersions")),
                                      _generalized_negative_binomial, _generalized_negative_binomial_grad),
    "dirichlet": ((("alpha", "concentrations (last axis: the categories)"),), _dirichlet, _dirichlet_grad),
}


class _PdfProperty(FunctionalProperty):
    """``sample`` of shape ``S + extra`` (dirichlet: ``S + extra + (k,)``), parameters of shape ``S`` (``S + (k,)``)."""

    dirichlet = False

    def infer_shape(self, in_shapes):
        names = self.list_arguments()
        sample, params = in_shapes[0], in_shapes[1:]
        known = [tuple(s) for s in params if s is not None]
        for n, s in zip(names[1:], params, strict=False):
            if s is not None and tuple(s) != known[0]:
                raise self.error(f"parameters must have one shape: {names[1]} {known[0]}, {n} {tuple(s)}")
        if sample is None:
            return list(in_shapes), [None], []
        sample = tuple(sample)
        if known:
            ps = known[0]
            lead = ps[:-1] if self.dirichlet else ps
            ok = len(sample) >= len(ps) and sample[:len(lead)] == lead
            if self.dirichlet:
                ok = ok and bool(ps) and sample[-1] == ps[-1]
            if not ok:
                want = (f"{lead} + extra + ({ps[-1] if ps else '?'},)" if self.dirichlet else f"{ps} + extra")
                raise self.error(f"sample has shape {sample} but parameters of shape {ps} need {want}")
        out = (sample[:-1] or (1,)) if self.dirichlet else sample
        return [sample] + [s if s is None else tuple(s) for s in params], [out], []

    def infer_type(self, in_types):
        t0 = next((t for t in in_types if t is not None), None)
        if t0 is None:
            return list(in_types), [None], []
        for n, t in zip(self.list_arguments(), in_types, strict=False):
            if t is not None and np.dtype(t) != np.dtype(t0):
                raise self.error(f"every input must have one dtype: {self.list_arguments()[0]} "
                                 f"{np.dtype(t0).name}, {n} {np.dtype(t).name}")
        if np.dtype(t0).kind != "f":
            raise self.error(f"takes floating point inputs only, got {np.dtype(t0).name}")
        return [t0] * len(in_types), [t0], []


def _expand(params, sample_ndim, dirichlet):
    """Parameters reshaped to broadcast against the sample (the extra axes inserted)."""
    out = []
    for q in params:
        extra = sample_ndim - q.ndim
        shape = q.shape[:-1] + (1,) * extra + q.shape[-1:] if dirichlet else q.shape + (1,) * extra
        out.append(q.reshape(shape))
    return out


def _f64(xp, a):
    return a.astype(xp.float64) if a.dtype != xp.float64 else a


def _make(lpdf, grad, dirichlet):
    def fwd(xp, p, sample, *params):
        x = _f64(xp, sample)
        res = lpdf(xp, x, *_expand([_f64(xp, q) for q in params], x.ndim, dirichlet))
        res = res if p.is_log else xp.exp(res)
        return res.reshape(res.shape or (1,)).astype(sample.dtype)

    def bwd(xp, p, og, ins, outs):
        sample, params = ins[0], ins[1:]
        x = _f64(xp, sample)
        expanded = _expand([_f64(xp, q) for q in params], x.ndim, dirichlet)
        scale = _f64(xp, og[0]) if p.is_log else _f64(xp, og[0]) * _f64(xp, outs[0])
        if dirichlet:
            scale = scale.reshape(x.shape[:-1] + (1,))
        grads = grad(xp, x, *expanded)
        res = [None if grads[0] is None else (scale * grads[0]).astype(sample.dtype)]
        for q, e, g in zip(params, expanded, grads[1:], strict=True):
            full = scale * g
            axes = tuple(i for i, (a, b) in enumerate(zip(e.shape, full.shape, strict=True)) if a == 1 and b != 1)
            res.append(full.sum(axis=axes).reshape(q.shape).astype(q.dtype))
        return res

    return fwd, bwd


for _dist, (_params, _lpdf, _grad) in _FAMILIES.items():
    _names = tuple(n for n, _ in _params)
    _fwd, _bwd = _make(_lpdf, _grad, _dist == "dirichlet")
    _where = ("``sample`` of shape S + extra + (k,), ``alpha`` of S + (k,); the output has sample's shape "
              "without its last axis" if _dist == "dirichlet" else
              "``sample`` of shape S + extra, parameters of shape S; the output has sample's shape")
    defop(f"_random_pdf_{_dist}", param=PdfParam, base=_PdfProperty, arguments=("sample",) + _names,
          aliases=(f"random_pdf_{_dist}",), fwd=_fwd, bwd=_bwd, dirichlet=_dist == "dirichlet",
          doc=f"The density (``is_log``: its log) of samples from {_dist.replace('_', ' ')} distributions "
              f"with parameters {', '.join(f'{n} ({m})' for n, m in _params)}: {_where}.")
