"""Table rows: the ``_random_pdf_<dist>`` densities against scipy-free numpy references (math.lgamma),
with numerical gradients to the parameters and, for the continuous distributions, to the sample."""

from __future__ import annotations

import math

import numpy as np
from cases import Case, integers, uniform

_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
S, X = (2, 3), (2, 3, 2)  # parameter shape, sample shape (one extra axis)


def _ext(q, ndim):
    return q.reshape(q.shape + (1,) * (ndim - q.ndim))


def _ref(lpdf):
    def ref(x, *params, is_log=False):
        res = lpdf(x.astype(np.float64), *[_ext(q.astype(np.float64), x.ndim) for q in params])
        return (res if is_log else np.exp(res)).astype(x.dtype)
    return ref


def _nb(x, k, p):
    return _lgamma(x + k) - _lgamma(x + 1) - _lgamma(k) + k * np.log(p) + x * np.log(1 - p)


LPDF = {
    "uniform": lambda x, lo, hi: np.broadcast_to(-np.log(hi - lo), x.shape),
    "normal": lambda x, mu, s: -((x - mu) ** 2) / (2 * s * s) - np.log(s * math.sqrt(2 * math.pi)),
    "gamma": lambda x, a, b: a * np.log(b) + (a - 1) * np.log(x) - b * x - _lgamma(a),
    "exponential": lambda x, lam: np.log(lam) - lam * x,
    "poisson": lambda x, lam: x * np.log(lam) - lam - _lgamma(x + 1),
    "negative_binomial": _nb,
    "generalized_negative_binomial": lambda x, mu, al: _nb(x, 1 / al, 1 / (mu * al + 1)),
}


def _dirichlet(x, alpha, is_log=False):
    a = alpha.astype(np.float64).reshape(alpha.shape[:-1] + (1,) * (x.ndim - alpha.ndim) + alpha.shape[-1:])
    res = (((a - 1) * np.log(x)).sum(-1) + _lgamma(a.sum(-1)) - _lgamma(a).sum(-1))
    return (res if is_log else np.exp(res)).astype(x.dtype)


def _simplex(rng, shape, dtype):
    v = rng.uniform(0.2, 1.0, shape)
    return (v / v.sum(-1, keepdims=True)).astype(dtype)


GENS = {
    "uniform": [uniform(-1, 1), uniform(-3, -2), uniform(2, 3)],
    "normal": [uniform(-2, 2), uniform(-1, 1), uniform(0.5, 2)],
    "gamma": [uniform(0.2, 3), uniform(0.5, 3), uniform(0.5, 2)],
    "exponential": [uniform(0.1, 3), uniform(0.5, 3)],
    "poisson": [integers(0, 6), uniform(0.5, 4)],
    "negative_binomial": [integers(0, 6), uniform(0.5, 4), uniform(0.2, 0.8)],
    "generalized_negative_binomial": [integers(0, 6), uniform(0.5, 4), uniform(0.2, 1.5)],
}
DISCRETE = {"poisson", "negative_binomial", "generalized_negative_binomial"}

CASES = []
for _d, _lp in LPDF.items():
    _n = len(GENS[_d])
    for _log in (False, True):
        CASES.append(Case(f"_random_pdf_{_d}", [[X] + [S] * (_n - 1), [S] * _n], ref=_ref(_lp),
                          params=dict(is_log=_log), gens=GENS[_d], name=f"pdf_{_d}{'_log' if _log else ''}",
                          wrt=tuple(range(1, _n)) if _d in DISCRETE else None))
CASES += [Case("_random_pdf_dirichlet", [[(2, 3, 3), (2, 3)], [(4, 2), (2,)]], ref=_dirichlet,
               params=dict(is_log=_log), gens=[_simplex, uniform(0.5, 3)], name=f"pdf_dirichlet{'_log' * _log}")
          for _log in (False, True)]
