"""Special functions: erf, erfinv, gamma, gammaln, with their gradients.

NumPy has none of them and SciPy is not a dependency, so the kernels are
vectorised formulas over ``xp`` (they run on CuPy unchanged), evaluated in
float64 and cast back to the input's dtype:

* ``erf``: the series ``erf(a) = 2/sqrt(pi) exp(-a^2) sum (2a^2)^n a / (2n+1)!!`` (all terms
  positive, no cancellation) below 2, the continued fraction of ``erfc`` above;
* ``erfinv``: a closed-form first guess (Winitzki's), polished by two Halley steps on
  ``erf`` (or on ``erfc`` in the tails, so that ``y`` near 1 keeps its digits);
* ``gamma``/``gammaln``: the Lanczos approximation (g=7, 9 terms) with the reflection
  formula below 0.5; their gradients use a digamma from recurrence plus the asymptotic series.

Relative errors stay below about 1e-12 (1e-15 for erf), far beyond what float32 needs.

>>> import numpy as np
>>> from mxasync.operator.tensor.special import erf, erfinv, gamma, gammaln
>>> round(float(erf(np, np.array([0.5]))[0]), 12)    # math.erf(0.5) = 0.5204998778130465
0.520499877813
>>> round(float(erfinv(np, erf(np, np.array([1.25])))[0]), 12)
1.25
>>> gamma(np, np.array([5.0, 0.5])) ** 2            # 4! squared, pi
array([576.        ,   3.14159265])
>>> round(float(gammaln(np, np.array([101.0]))[0]), 9)   # log(100!)
363.739375556
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..functional import defop
from .elemwise_unary import _UnaryProperty

__all__ = ["erf", "erfc_pos", "erfinv", "gamma", "gammaln", "digamma"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SERIES_MAX = 2.0  # below: the positive series; above: erfc's continued fraction
_SERIES_TERMS = 32
_CF_TERMS = 40


def _quiet(fn):
    """NumPy warns on the infs and nans these functions return by design; keep it quiet."""

    @functools.wraps(fn)
    def wrapper(xp, x):
        with np.errstate(all="ignore"):  # numpy's warnings (other namespaces have their own, or none)
            return fn(xp, x)

    return wrapper


def _f64(xp, x):
    return x.astype("float64") if x.dtype != xp.float64 else x


def _erf_series(xp, a):
    """erf(a) for 0 <= a <= 2."""
    z2 = 2.0 * a * a
    term = a.copy()
    total = a.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * z2 / (2 * n + 1)
        total = total + term
    return _TWO_OVER_SQRT_PI * xp.exp(-a * a) * total


def _erfc_cf(xp, a):
    """erfc(a) for a >= 2: exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))."""
    f = a.copy()
    for k in range(_CF_TERMS, 0, -1):
        f = a + (0.5 * k) / f
    return xp.exp(-a * a) / (math.sqrt(math.pi) * f)


def _erf_erfc(xp, a):
    """(erf(a), erfc(a)) for a >= 0 (float64), each accurate where it is the small one."""
    small = a < _SERIES_MAX
    erf_a = xp.empty_like(a)
    erfc_a = xp.empty_like(a)
    s = _erf_series(xp, a[small])
    erf_a[small] = s
    erfc_a[small] = 1.0 - s
    big = ~small  # nan lands here and stays nan
    c = _erfc_cf(xp, a[big])
    erf_a[big] = 1.0 - c
    erfc_a[big] = c
    return erf_a, erfc_a


@_quiet
def erf(xp, x):
    """The error function, elementwise."""
    x64 = _f64(xp, x)
    e, _ = _erf_erfc(xp, xp.abs(x64))
    e = xp.where(xp.isnan(x64), x64, e)
    return (xp.sign(x64) * e).astype(x.dtype)


def erfc_pos(xp, a):
    """erfc(a) for a >= 0 (float64 in, float64 out)."""
    return _erf_erfc(xp, a)[1]


@_quiet
def erfinv(xp, y):
    """The inverse error function: inf at +-1, nan outside [-1, 1]."""
    y64 = _f64(xp, y)
    ay = xp.abs(y64)
    inside = ay < 1.0
    ay_c = xp.where(inside, ay, 0.0)
    q = 1.0 - ay_c  # exact for ay >= 0.5
    log_term = xp.log(q * (1.0 + ay_c))  # log(1 - y^2)
    a = 0.147
    b = 2.0 / (math.pi * a) + 0.5 * log_term
    x = xp.sqrt(xp.maximum(xp.sqrt(b * b - log_term / a) - b, 0.0))
    tail = ay_c > 0.5
    for _ in range(2):  # Halley on f(x) = erf(x) - |y| (or q - erfc(x) in the tail)
        e, c = _erf_erfc(xp, x)
        f = xp.where(tail, q - c, e - ay_c)
        d = _TWO_OVER_SQRT_PI * xp.exp(-x * x)
        x = x - f / (d + x * f)
    x = xp.where(inside, x, xp.where(ay == 1.0, xp.inf, xp.nan))
    return (xp.sign(y64) * x).astype(y.dtype)


# Lanczos, g = 7, n = 9 (the classic published coefficients)
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _lanczos_sum(z):
    """For z >= 0.5 (as z - 1): returns (series, t)."""
    zm = z - 1.0
    s = _LANCZOS[0]
    for i in range(1, len(_LANCZOS)):
        s = s + _LANCZOS[i] / (zm + i)
    return s, zm + _LANCZOS_G + 0.5


def _nonpos_int(xp, x):
    return (x <= 0) & (x == xp.floor(x))


def _reflection(xp, x):
    """``(x in float64, where x < 0.5, z)``: the series is taken at ``z = 1 - x`` there (the reflection
    formula brings it back) and at ``x`` elsewhere."""
    x64 = _f64(xp, x)
    refl = x64 < 0.5
    return x64, refl, xp.where(refl, 1.0 - x64, x64)


@_quiet
def gamma(xp, x):
    """The gamma function: inf at 0, nan at the negative integers, reflection below 0.5."""
    x64, refl, z = _reflection(xp, x)
    s, t = _lanczos_sum(z)
    half = xp.power(t, 0.5 * (z - 0.5))  # t^(z-0.5) in two halves: no early overflow
    g = math.sqrt(2.0 * math.pi) * half * xp.exp(-t) * half * s
    sin_term = xp.sin(math.pi * xp.where(refl, x64, 0.5))
    g = xp.where(refl, math.pi / (sin_term * g), g)
    g = xp.where(_nonpos_int(xp, x64), xp.where(x64 == 0, xp.inf, xp.nan), g)
    return g.astype(x.dtype)


@_quiet
def gammaln(xp, x):
    """log|gamma(x)|: inf at 0 and the negative integers."""
    x64, refl, z = _reflection(xp, x)
    s, t = _lanczos_sum(z)
    lg = _HALF_LOG_2PI + (z - 0.5) * xp.log(t) - t + xp.log(s)
    sin_term = xp.abs(xp.sin(math.pi * xp.where(refl, x64, 0.5)))
    lg = xp.where(refl, math.log(math.pi) - xp.log(xp.where(refl, sin_term, 1.0)) - lg, lg)
    lg = xp.where(_nonpos_int(xp, x64), xp.inf, lg)
    return lg.astype(x.dtype)


@_quiet
def digamma(xp, x):
    """psi(x) = d log|gamma(x)| / dx (float64)."""
    x64, refl, z = _reflection(xp, x)
    acc = xp.zeros_like(z)
    for _ in range(10):  # psi(z) = psi(z + 1) - 1/z until z >= 10
        low = z < 10.0
        acc = acc - xp.where(low, 1.0 / z, 0.0)
        z = xp.where(low, z + 1.0, z)
    r = 1.0 / (z * z)
    series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
    psi = acc + xp.log(z) - 0.5 / z - series
    cot = 1.0 / xp.tan(math.pi * xp.where(refl, x64, 0.25))
    out = xp.where(refl, psi - math.pi * cot, psi)
    return xp.where(refl & (x64 == xp.floor(x64)), xp.inf, out)  # the poles 0, -1, ...: +inf, as MXNet gives


def _bwd(grad, deps):
    def bwd(xp, p, og, ins, outs):
        return [grad(xp, ins[0] if "in" in deps else None, outs[0] if "out" in deps else None, og[0])]

    return bwd


def _cast_like(g, ref):
    return g.astype(ref.dtype) if g.dtype != ref.dtype else g


SPECIAL_OPS = {
    "erf": (erf, lambda xp, x, y, g: g * _cast_like(_TWO_OVER_SQRT_PI * xp.exp(-_f64(xp, x) ** 2), g), "in",
            "the Gauss error function"),
    "erfinv": (erfinv, lambda xp, x, y, g: g * _cast_like(0.5 * math.sqrt(math.pi) * xp.exp(_f64(xp, y) ** 2), g),
               "out", "the inverse error function (inf at +-1, nan outside [-1, 1])"),
    "gamma": (gamma, lambda xp, x, y, g: g * y * _cast_like(digamma(xp, x), g), "in,out",
              "the gamma function"),
    "gammaln": (gammaln, lambda xp, x, y, g: g * _cast_like(digamma(xp, x), g), "in",
                "log|gamma(x)|"),
}

for _name, (_f, _g, _deps, _what) in SPECIAL_OPS.items():
    defop(_name, fwd=lambda xp, p, x, f=_f: f(xp, x), bwd=_bwd(_g, _deps), deps="og," + _deps,
          base=_UnaryProperty, inplace=True, doc=f"Elementwise {_what}, computed in float64.")
