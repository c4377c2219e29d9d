"""NumPy-interface samplers (``_npi_random_*``): the context's seeded generator, NumPy's distributions.

Parameters are scalars (params) or arrays (inputs, broadcast against ``size``); ``mx.random.seed``
/ ``npx.seed`` make runs repeat. Samplers with array parameters pass gradients to them by
the reparameterisation MXNet uses (normal: ``loc`` and ``scale``; uniform: ``low``, ``high``;
exponential, weibull, pareto, rayleigh, gamma: their scale).

>>> from mxasync.operator import get_op
>>> get_op("_npi_random_normal").prepare(size=(2, 3)).infer_shape([])[1]
[(2, 3)]
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...base import MXAsyncValueError
from ._npop import npop, unbroadcast

__all__ = ["DISTRIBUTIONS"]

Shape = Optional[tuple[int, ...]]

# name: (numpy Generator method, its parameters with defaults)
DISTRIBUTIONS: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {
    "uniform": ("uniform", (("low", 0.0), ("high", 1.0))),
    "normal": ("normal", (("loc", 0.0), ("scale", 1.0))),
    "lognormal": ("lognormal", (("mean", 0.0), ("sigma", 1.0))),
    "logistic": ("logistic", (("loc", 0.0), ("scale", 1.0))),
    "gumbel": ("gumbel", (("loc", 0.0), ("scale", 1.0))),
    "exponential": ("exponential", (("scale", 1.0),)),
    "weibull": ("weibull", (("a", 1.0),)),
    "pareto": ("pareto", (("a", 1.0),)),
    "power": ("power", (("a", 1.0),)),
    "rayleigh": ("rayleigh", (("scale", 1.0),)),
    "gamma": ("gamma", (("shape", 1.0), ("scale", 1.0))),
    "beta": ("beta", (("a", 1.0), ("b", 1.0))),
    "chisquare": ("chisquare", (("df", 1.0),)),
}


def _sampler(method, names):
    def kernel(xp, p, rng, *arrays):
        it = iter(arrays)
        vals = [next(it) if n in p.array_params else getattr(p, n) for n in names]
        if method == "gamma":  # MXNet checks the array parameters too (NumPy accepts 0)
            for n, v in zip(names, vals, strict=True):
                if n in p.array_params and bool(xp.any(v <= 0)):
                    raise MXAsyncValueError(f"np.random.gamma: {n} must be positive")
        size = p.size
        if size is None:
            shapes = [np.shape(v) for v in vals]
            size = np.broadcast_shapes(*shapes) if shapes else ()
        try:
            noise = getattr(rng, method)(*vals, size=size)
        except ValueError as exc:  # a bad parameter value (scale < 0): a ValueError for the user, as MXNet
            raise MXAsyncValueError(f"np.random.{method}: {exc}") from None
        return np.asarray(noise).astype(p.dtype, copy=False)
    return kernel


def _grad(name, names):
    def bwd(xp, p, og, ins, outs):
        g, y = og[0], outs[0]
        vals = dict(zip([n for n in names if n in p.array_params], ins, strict=False))
        res = []
        for n in names:
            if n not in p.array_params:
                continue
            v = vals[n]
            with np.errstate(all="ignore"):
                if name == "normal":
                    d = g if n == "loc" else g * (y - _val(p, vals, "loc")) / v
                elif name == "uniform":
                    lo, hi = _val(p, vals, "low"), _val(p, vals, "high")
                    t = (y - lo) / (hi - lo)
                    d = g * (1 - t) if n == "low" else g * t
                elif name in ("exponential", "rayleigh") or (name == "gamma" and n == "scale"):
                    d = g * y / v
                elif name == "lognormal":
                    d = g * y if n == "mean" else g * y * (xp.log(y) - _val(p, vals, "mean")) / v
                elif name in ("logistic", "gumbel"):
                    d = g if n == "loc" else g * (y - _val(p, vals, "loc")) / v
                elif name == "weibull":
                    d = g * y * xp.log(xp.where(y > 0, y, 1)) * (-1 / v)
                elif name == "pareto":
                    d = -g * (y + 1) * xp.log(y + 1) / v
                else:
                    d = None
            res.append(None if d is None else unbroadcast(xp, xp.asarray(d), v.shape).astype(v.dtype))
        return res
    return bwd


def _val(p, vals, n):
    return vals[n] if n in vals else getattr(p, n)


def _args(names):
    """The array parameters are inputs ``input1``, ``input2``, ... (MXNet's names), in parameter order."""
    return lambda p: [f"input{i + 1}" for i, n in enumerate(names) if n in p.array_params]


for _name, (_method, _params) in DISTRIBUTIONS.items():
    _names = tuple(n for n, _ in _params)
    _fields: dict[str, Any] = {n: (float, d) for n, d in _params}
    _fields.update({"size": (Shape, None), "dtype": (str, "float32"), "array_params": (tuple[str, ...], ())})
    npop(f"_npi_random_{_name}", _sampler(_method, _names), params=_fields, grad=_grad(_name, _names),
         arguments=tuple(f"input{i + 1}" for i in range(len(_names))), args=_args(_names), random=True,
         deps="og,in,out",
         doc=f"Samples of NumPy's ``{_name}`` distribution; array parameters are inputs (``array_params``).")


def _randint(xp, p, rng):
    return rng.integers(p.low, p.high, size=p.size or (), dtype=p.dtype)


npop("_npi_random_randint", _randint, arguments=(), random=True,
     params={"low": (int, 0), "high": (int, 1), "size": (Shape, None), "dtype": (str, "int64")},
     grad=lambda xp, p, og, ins, outs: [], doc="Integers in ``[low, high)``.")


def _choice(xp, p, rng, *arrays):
    a = arrays[0] if p.a is None else p.a
    probs = arrays[-1].astype(np.float64) if p.weighted else None
    if probs is not None:
        probs = probs / probs.sum()
    return np.asarray(rng.choice(a, size=p.size, replace=p.replace, p=probs))


npop("_npi_random_choice", _choice, arguments=("input1", "input2"), random=True,
     args=lambda p: (["input1"] if p.a is None else []) + (["input2"] if p.weighted else []),
     params={"a": (Optional[int], None), "size": (Shape, None), "replace": (bool, True), "weighted": (bool, False)},
     grad=lambda xp, p, og, ins, outs: [None] * len(ins), doc="NumPy's ``choice``.")


def _multinomial(xp, p, rng, *arrays):
    pvals = (arrays[0] if arrays else np.asarray(p.pvals)).astype(np.float64)
    if pvals.size == 0:  # no categories: an empty result (MXNet's)
        return np.zeros(tuple(p.size or ()) + (0,), np.int64)
    pvals = pvals / max(float(pvals.sum()), 1e-300)
    return rng.multinomial(p.n, pvals, size=p.size).astype(np.int64)


npop("_npi_random_multinomial", _multinomial, arguments=("input1",), random=True, stand_in="simplex",
     args=lambda p: [] if p.pvals is not None else ["input1"],
     params={"n": (int, 1), "pvals": (Optional[tuple[float, ...]], None), "size": (Shape, None)},
     grad=lambda xp, p, og, ins, outs: [None] * len(ins), doc="NumPy's ``multinomial``.")


def _bernoulli(xp, p, rng, *arrays):
    prob = arrays[0] if arrays else p.prob
    if arrays and bool(xp.any((prob < 0) | (prob > 1))):
        raise MXAsyncValueError("npx.random.bernoulli: prob must be in [0, 1]")
    size = p.size if p.size is not None else np.shape(prob)
    return (rng.random(size) < prob).astype(p.dtype)


npop("_npi_random_bernoulli", _bernoulli, arguments=("input1",), random=True,
     args=lambda p: [] if p.prob is not None else ["input1"],
     params={"prob": (Optional[float], None), "size": (Shape, None), "dtype": (str, "float32")},
     grad=lambda xp, p, og, ins, outs: [None] * len(ins), doc="Bernoulli samples (1 with probability ``prob``).")


def _mvn(xp, p, rng, mean, cov):
    """``mean + z @ L^T`` with ``L`` the Cholesky factor of ``cov``: batches of means and covariances
    (MXNet's form; NumPy's takes one of each)."""
    k = mean.shape[-1]
    batch = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    shape = tuple(p.size or ()) + batch + (k,)
    chol = xp.linalg.cholesky(xp.asarray(cov, xp.float64) + 0 * xp.eye(k))
    z = rng.standard_normal(shape)
    return (mean + xp.einsum("...ij,...j->...i", chol, z)).astype(mean.dtype)


npop("_npi_random_multivariate_normal", _mvn, arguments=("mean", "cov"), random=True, stand_in="eye",
     params={"size": (Shape, None)}, grad=lambda xp, p, og, ins, outs: [None, None],
     doc="NumPy's ``multivariate_normal`` of one mean and covariance.")


def _shuffle(xp, p, rng, a):
    r = a.copy()
    rng.shuffle(r)
    return r


npop("_npi_shuffle", _shuffle, random=True, grad=lambda xp, p, og, ins, outs: [None],
     doc="A copy of ``a`` shuffled along its first axis.")


def _sample_n(kind):
    def kernel(xp, p, rng, a, b):
        shape = tuple(p.batch_shape) + np.broadcast_shapes(a.shape, b.shape)
        if kind == "uniform":
            r = rng.uniform(a, b, size=shape)
        else:
            r = rng.normal(a, b, size=shape)
        return np.asarray(r).astype(np.result_type(a.dtype, b.dtype) if a.dtype.kind == "f" else np.float32)
    return kernel


for _k in ("uniform", "normal"):
    npop(f"_npx_random_{_k}_n", _sample_n(_k), arguments=("a", "b"), random=True,
         params={"batch_shape": (tuple[int, ...], ())}, grad=lambda xp, p, og, ins, outs: [None, None],
         doc=f"``{_k}`` samples of shape ``batch_shape + broadcast(a, b).shape`` (``npx.random.{_k}_n``).")
