"""Table rows: the ``_random_<dist>_like`` samplers (shape/dtype of the input, sample mean), ``_shuffle``
(a permutation of the rows) and ``_sample_unique_zipfian`` (distinct classes per row)."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform

N = (4000,)


def _mean(mean, tol):
    def check(outs, inputs, params):
        o = outs[0]
        assert o.shape == inputs[0].shape and o.dtype == inputs[0].dtype
        assert abs(o.astype(np.float64).mean() - mean) < tol, (o.mean(), mean)
    return check


def _permutation(outs, inputs, params):
    o, x = outs[0], inputs[0]
    assert o.shape == x.shape
    assert sorted(map(tuple, o.reshape(len(o), -1))) == sorted(map(tuple, x.reshape(len(x), -1)))


def _unique_rows(outs, inputs, params):
    samples, tries = outs[0], outs[1]
    batch, n = params["shape"]
    assert samples.shape == (batch, n) and tries.shape == (batch,) and samples.dtype == np.int64
    for row, t in zip(samples, tries, strict=True):
        assert np.unique(row).size == n and row.min() >= 0 and row.max() < params["range_max"] and t >= n


CASES = [
    Case("_sample_unique_zipfian", [()], params=dict(range_max=40, shape=(3, 12)), check=_unique_rows),
    Case("_random_uniform_like", [(N,)], params=dict(low=1.0, high=3.0), check=_mean(2.0, 0.05)),
    Case("_random_normal_like", [(N,)], params=dict(loc=-1.0, scale=0.5), check=_mean(-1.0, 0.05)),
    Case("_random_exponential_like", [(N,)], params=dict(lam=4.0), check=_mean(0.25, 0.03)),
    Case("_random_gamma_like", [(N,)], params=dict(alpha=2.0, beta=1.5), check=_mean(3.0, 0.2)),
    Case("_random_poisson_like", [(N,)], params=dict(lam=3.0), check=_mean(3.0, 0.15)),
    Case("_random_negative_binomial_like", [(N,)], params=dict(k=3.0, p=0.5), check=_mean(3.0, 0.3)),
    Case("_random_generalized_negative_binomial_like", [(N,)], params=dict(mu=2.0, alpha=0.5),
         check=_mean(2.0, 0.2)),
    Case("_shuffle", [((6, 2),), ((1,),)], gens=uniform(), check=_permutation),
]
