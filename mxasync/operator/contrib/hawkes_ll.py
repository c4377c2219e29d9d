"""``_contrib_hawkesll`` (MXNet 1.9.1's, ``mx.nd.contrib.hawkesll``): the log likelihood of ``K`` independent
univariate Hawkes processes with exponential kernels, ``lambda_k(t) = lda_k + alpha_k * beta_k *
sum_{t_i < t, y_i = k} exp(-beta_k (t - t_i))``, per sample of a batch of ragged sequences.

Inputs: ``lda`` (N, K) background intensities, ``alpha`` (K,) branching ratios, ``beta`` (K,) decays,
``state`` (N, K) the memory ``s_k(0)`` carried from earlier events, ``lags`` (N, T) interarrival times,
``marks`` (N, T) int32 process ids, ``valid_length`` (N,) points per sequence, ``max_time`` (N,) the end
of each observation window. Outputs: the log likelihood (N,) and the memory at ``max_time`` (N, K).
The gradient, as MXNet's, goes to ``lda``, ``alpha`` and ``beta`` (``beta`` through the memory too); the
other inputs get none. Unlike MXNet, a head gradient on the memory output reaches ``beta`` as well (MXNet
ignores it; with none there the two agree).
"""

from __future__ import annotations

import numpy as np

from ..functional import FunctionalProperty, defop

__all__: list[str] = []

_ARGS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


class _HawkesProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        if any(s is None for s in in_shapes):
            return list(in_shapes), [None, None], []
        mu, alpha, beta, state, lags, marks, vl, mt = (tuple(s) for s in in_shapes)
        if len(mu) != 2 or len(lags) != 2:
            raise self.error(f"lda {mu} and lags {lags} must be 2-D: (N, K) and (N, T)")
        (n, k), t = mu, lags[1]
        want = dict(alpha=(k,), beta=(k,), state=(n, k), lags=(n, t), marks=(n, t), valid_length=(n,),
                     max_time=(n,))
        for name, s in zip(_ARGS[1:], (alpha, beta, state, lags, marks, vl, mt), strict=True):
            if s != want[name]:
                raise self.error(f"{name} has shape {s} but lda {mu} and lags {lags} need {want[name]}")
        return [mu, (k,), (k,), (n, k), (n, t), (n, t), (n,), (n,)], [(n,), (n, k)], []

    def infer_type(self, in_types):
        t = in_types[0]
        return [t, t, t, t, t, np.dtype(np.int32), t, t], [t, t], []


def _walk(xp, mu, alpha, beta, state, lags, marks, vl, with_grad):
    """Run the events in order; returns (ll, memory, last event times) and, ``with_grad``, the per-sample
    gradients (mu, alpha, beta) of the events' part and the memory's derivative in beta."""
    n, k = mu.shape
    rows = xp.arange(n)
    dt = mu.dtype
    s = state.astype(dt, copy=True)
    ds = xp.zeros((n, k), dtype=dt)
    last = xp.zeros((n, k), dtype=dt)
    t = xp.zeros(n, dtype=dt)
    ll = xp.zeros(n, dtype=dt)
    g_mu, g_alpha, g_beta = (xp.zeros((n, k), dtype=dt) for _ in range(3))
    vl = vl.astype(np.int64)
    for j in range(lags.shape[1]):
        act = j < vl
        if not bool(act.any()):
            break
        c = xp.where(act, marks[:, j].astype(np.int64), 0)
        t_new = t + lags[:, j]
        d = t_new - last[rows, c]
        a, b, sc, dsc, m = alpha[c], beta[c], s[rows, c], ds[rows, c], mu[rows, c]
        ed = xp.exp(-b * d)
        lda = xp.where(act, m + a * b * sc * ed, 1)
        ll += xp.where(act, xp.log(lda) - (m * d + a * sc * (1 - ed)), 0)
        if with_grad:
            g_mu[rows, c] += xp.where(act, 1 / lda - d, 0)
            g_alpha[rows, c] += xp.where(act, b * sc * ed / lda - sc * (1 - ed), 0)
            g_beta[rows, c] += xp.where(act, a * ed * (sc * (1 - b * d) + b * dsc) / lda
                                        - a * (dsc * (1 - ed) + sc * d * ed), 0)
            ds[rows, c] = xp.where(act, ed * (dsc - d * sc), dsc)
        s[rows, c] = xp.where(act, 1 + sc * ed, sc)
        last[rows, c] = xp.where(act, t_new, last[rows, c])
        t = xp.where(act, t_new, t)
    return ll, s, ds, last, (g_mu, g_alpha, g_beta)


def _hawkesll(xp, p, mu, alpha, beta, state, lags, marks, vl, max_time):
    ll, s, _, last, _ = _walk(xp, mu, alpha, beta, state, lags, marks, vl, False)
    d = max_time[:, None] - last
    ed = xp.exp(-beta * d)
    ll = ll - (mu * d + alpha * s * (1 - ed)).sum(axis=1)
    return ll, ed * s


def _hawkesll_bwd(xp, p, og, ins, outs):
    mu, alpha, beta, state, lags, marks, vl, max_time = ins
    _, s, ds, last, (g_mu, g_alpha, g_beta) = _walk(xp, mu, alpha, beta, state, lags, marks, vl, True)
    d = max_time[:, None] - last
    ed = xp.exp(-beta * d)
    g_mu = g_mu - d
    g_alpha = g_alpha - s * (1 - ed)
    g_beta = g_beta - alpha * (ds * (1 - ed) + s * d * ed)
    w = og[0][:, None]
    # the memory output ed * s depends on beta too (MXNet drops that part; it is zero without a head there)
    g_beta_mem = og[1] * ed * (ds - d * s)
    return [g_mu * w, (g_alpha * w).sum(axis=0), (g_beta * w + g_beta_mem).sum(axis=0), None, None, None, None, None]


defop("_contrib_hawkesll", base=_HawkesProperty, arguments=_ARGS, outputs=("output", "out_state"),
      fwd=_hawkesll, bwd=_hawkesll_bwd, deps="og,in",
      doc="Log likelihood (N,) of K exponential-kernel Hawkes processes over ragged event sequences, and the "
          "memory at max_time (N, K); gradients to lda, alpha and beta.")
