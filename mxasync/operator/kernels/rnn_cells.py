"""The per-direction loops of the fused ``RNN`` op: one layer, one direction, forward and back-propagation
through time, for lstm, gru and the plain tanh / relu cell (``operator/nn/rnn.py`` runs the stack).

Every loop works in arrays its caller allocated: ``gates`` (T, N, G*H) arrives holding the input
projection of every step plus the biases (one GEMM over all steps, done by the caller) and leaves
holding the gate activations; the cell states, ``tanh(c)``, GRU's ``W_hn h + b_hn`` and the
outputs go to the caller's arrays too, so a training forward fills MXNet's *reserve space* and
backward reads it instead of running the forward again.  Each step is one recurrent GEMM
accumulated onto its gates (BLAS beta = 1) and elementwise work written in place (``out=``) into
small buffers made once per call, so a step allocates nothing.

The sigmoid gates are computed as ``0.5 * tanh(x / 2) + 0.5``: the caller scales their weight rows
and biases by 0.5 (exact in binary floating point), so one ``tanh`` over a step's whole gate
block serves sigmoid and tanh gates alike.  LSTM's gates are kept in the order o, i, f, g here
(MXNet's vector holds i, f, g, o): the three sigmoid gates are then one contiguous block, and so
are the three gates whose gradient scales with the cell gradient.  ``LSTM_ORDER`` maps them.

Back-propagation gathers the gate gradients of every step (``dgates``, and GRU's ``dgates_h``
for the recurrent side) so the caller computes the weight gradients as one GEMM over all steps.

>>> import numpy as np
>>> gates = np.zeros((2, 1, 1)); y = np.empty((2, 1, 1))
>>> plain_forward(np, gates, y, np.ones((1, 1)), np.zeros((1, 1)), False, "rnn_tanh")
>>> y.ravel().tolist()
[0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

from ._runner import PLAIN

__all__ = ["LSTM_ORDER", "lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "plain_forward",
           "plain_backward", "gemm_add"]

#: LSTM gate blocks in this module's order (o, i, f, g), as indices of MXNet's (i, f, g, o)
LSTM_ORDER = (3, 0, 1, 2)


def gemm_add(xp: Any, run, a, b, out) -> None:
    """``out += a @ b`` (BLAS's beta = 1 where the runner offers it)."""
    if run.accumulates:
        run.matmul(xp, a, b, out=out, accumulate=True)
    else:
        out += run.matmul(xp, a, b)


def _steps(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _half_sigmoid_(xp, x) -> None:
    """``x = 0.5 * x + 0.5`` in place: ``tanh(z / 2)`` becomes ``sigmoid(z)``."""
    xp.multiply(x, 0.5, out=x)
    xp.add(x, 0.5, out=x)


def lstm_forward(xp: Any, st: dict, wh_t, h0, c0, reverse: bool, whr_t=None, clip=None, run=PLAIN) -> None:
    """One LSTM direction. ``st``: ``gates`` (T, N, 4H) with the (o, i, f scaled) input projections,
    ``c`` and ``tc`` (T, N, H) for the cell states and their tanh, ``y`` (T, N, R) the outputs,
    ``hp`` (T, N, H) the unprojected h (with ``whr_t``, the projection transposed), ``clip_mask``
    (T, N, H) where the clipped cell passes its gradient. ``wh_t``: (R, 4H), scaled like ``gates``.
    ``clip``: ``(lo, hi, nan_to_hi)`` or None."""
    gates, cs, tcs, ys = st["gates"], st["c"], st["tc"], st["y"]
    hidden = cs.shape[2]
    tmp = xp.empty_like(c0)
    h, c = h0, c0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        gemm_add(xp, run, h, wh_t, g)
        xp.tanh(g, out=g)
        _half_sigmoid_(xp, g[:, :3 * hidden])
        o, i, f, cand = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        ct = cs[t]
        xp.multiply(f, c, out=ct)
        xp.multiply(i, cand, out=tmp)
        xp.add(ct, tmp, out=ct)
        if clip is not None:
            _clip_(xp, ct, clip, st["clip_mask"][t])
        tc = tcs[t]
        xp.tanh(ct, out=tc)
        if whr_t is None:
            xp.multiply(o, tc, out=ys[t])
        else:
            xp.multiply(o, tc, out=st["hp"][t])
            ys[t] = run.matmul(xp, st["hp"][t], whr_t)
        h, c = ys[t], ct


def _clip_(xp, c, clip, mask) -> None:
    """Clip the cell state ``c`` in place; ``mask`` gets 1 where it was inside (its gradient passes)."""
    lo, hi, nan_to_hi = clip
    mask[...] = (c >= lo) & (c <= hi)
    if nan_to_hi:  # fmin/fmax take the number over a NaN: NaN -> hi
        xp.fmin(c, hi, out=c)
        xp.fmax(c, lo, out=c)
    else:
        xp.minimum(c, hi, out=c)
        xp.maximum(c, lo, out=c)


def lstm_backward(xp: Any, st: dict, wh, h0, c0, dy, dh, dc, dgates, reverse: bool, whr=None, g_r=None,
                  run=PLAIN):
    """BPTT of one LSTM direction over what :func:`lstm_forward` left in ``st``. ``wh`` (4H, R) unscaled,
    in this module's gate order; ``dy`` (T, N, R); ``dh``, ``dc`` the gradients of the final states
    (None: zero). Fills ``dgates`` (T, N, 4H) (and ``g_r`` (T, N, P), the gradients reaching the
    projected outputs, with ``whr`` (P, H)); returns the gradients of ``h0`` and ``c0``."""
    gates, cs, tcs = st["gates"], st["c"], st["tc"]
    batch, hidden = c0.shape
    carry = xp.zeros_like(h0) if dh is None else dh.copy()  # the gradient reaching h from the step after
    g_c_next = xp.zeros_like(c0) if dc is None else dc.copy()
    g_h, g_c, t1 = (xp.empty_like(c0) for _ in range(3))
    g_out = xp.empty_like(h0)
    for t in _steps(gates.shape[0], not reverse):
        o, i, f, cand = (gates[t][:, k * hidden:(k + 1) * hidden] for k in range(4))
        tc = tcs[t]
        first = t == 0 if not reverse else t == gates.shape[0] - 1
        c_prev = c0 if first else cs[t - 1 if not reverse else t + 1]
        xp.add(dy[t], carry, out=g_out)
        if whr is not None:
            g_r[t] = g_out
            run.matmul(xp, g_out, whr, out=g_h)
        else:
            g_h[...] = g_out
        # g_c = g_h * o * (1 - tanh(c)^2) + the cell gradient from the step after
        xp.multiply(tc, tc, out=t1)
        xp.subtract(1, t1, out=t1)
        xp.multiply(t1, o, out=t1)
        xp.multiply(t1, g_h, out=g_c)
        xp.add(g_c, g_c_next, out=g_c)
        if "clip_mask" in st:
            xp.multiply(g_c, st["clip_mask"][t], out=g_c)
        d_o, d_i, d_f, d_g = (dgates[t][:, k * hidden:(k + 1) * hidden] for k in range(4))
        _sigmoid_grad(xp, o, tc, g_h, d_o, t1)
        _sigmoid_grad(xp, i, cand, g_c, d_i, t1)
        _sigmoid_grad(xp, f, c_prev, g_c, d_f, t1)
        xp.multiply(cand, cand, out=t1)  # tanh' = 1 - g^2
        xp.subtract(1, t1, out=t1)
        xp.multiply(t1, i, out=t1)
        xp.multiply(t1, g_c, out=d_g)
        xp.multiply(g_c, f, out=g_c_next)
        run.matmul(xp, dgates[t], wh, out=carry)
    return carry, g_c_next


def _sigmoid_grad(xp, s, factor, grad, out, tmp) -> None:
    """``out = grad * factor * s * (1 - s)``: the gradient through a sigmoid gate ``s`` scaling ``factor``."""
    xp.subtract(1, s, out=tmp)
    xp.multiply(tmp, s, out=tmp)
    xp.multiply(tmp, factor, out=tmp)
    xp.multiply(tmp, grad, out=out)


def gru_forward(xp: Any, st: dict, wh_t, bhn, h0, reverse: bool, run=PLAIN) -> None:
    """One GRU direction. ``st``: ``gates`` (T, N, 3H) with the input projections (r, z scaled, their
    recurrent biases included), ``hn`` (T, N, H) for ``W_hn h + b_hn``, ``y`` (T, N, H). ``wh_t``
    (H, 3H) with the r, z columns scaled; ``bhn`` the n part of b_h2h."""
    gates, hns, ys = st["gates"], st["hn"], st["y"]
    hidden = hns.shape[2]
    hw = xp.empty((h0.shape[0], 3 * hidden), dtype=gates.dtype)
    tmp = xp.empty_like(h0)
    h = h0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        run.matmul(xp, h, wh_t, out=hw)
        rz = g[:, :2 * hidden]
        xp.add(rz, hw[:, :2 * hidden], out=rz)
        xp.tanh(rz, out=rz)
        _half_sigmoid_(xp, rz)
        r, z, n = g[:, :hidden], g[:, hidden:2 * hidden], g[:, 2 * hidden:]
        xp.add(hw[:, 2 * hidden:], bhn, out=hns[t])
        xp.multiply(r, hns[t], out=tmp)
        xp.add(n, tmp, out=n)
        xp.tanh(n, out=n)
        xp.subtract(h, n, out=tmp)  # h' = n + z * (h - n)
        xp.multiply(tmp, z, out=tmp)
        xp.add(n, tmp, out=ys[t])
        h = ys[t]


def gru_backward(xp: Any, st: dict, wh, h0, dy, dh, dgates, dgates_h, reverse: bool, run=PLAIN):
    """BPTT of one GRU direction: fills ``dgates`` (T, N, 3H), the gradients of the input projections
    ``[dr, dz, dn]``, and ``dgates_h`` those of ``W_h h + b_h`` (``r * dn`` in the n block); ``wh``
    (3H, H) unscaled. Returns the gradient of ``h0``."""
    gates, hns, ys = st["gates"], st["hn"], st["y"]
    hidden = hns.shape[2]
    steps = gates.shape[0]
    carry = xp.zeros_like(h0) if dh is None else dh.copy()
    g_h, t1, t2 = (xp.empty_like(h0) for _ in range(3))
    for t in _steps(steps, not reverse):
        r, z, n = gates[t][:, :hidden], gates[t][:, hidden:2 * hidden], gates[t][:, 2 * hidden:]
        first = t == 0 if not reverse else t == steps - 1
        h_prev = h0 if first else ys[t - 1 if not reverse else t + 1]
        d_r, d_z, d_n = (dgates[t][:, k * hidden:(k + 1) * hidden] for k in range(3))
        xp.add(dy[t], carry, out=g_h)
        xp.multiply(n, n, out=t1)  # dn = g_h * (1 - z) * (1 - n^2)
        xp.subtract(1, t1, out=t1)
        xp.multiply(t1, g_h, out=t1)
        xp.subtract(1, z, out=t2)
        xp.multiply(t1, t2, out=d_n)
        xp.multiply(t2, z, out=t2)  # dz = g_h * (h_prev - n) * z * (1 - z)
        xp.subtract(h_prev, n, out=t1)
        xp.multiply(t1, g_h, out=t1)
        xp.multiply(t1, t2, out=d_z)
        xp.multiply(d_n, r, out=dgates_h[t][:, 2 * hidden:])
        _sigmoid_grad(xp, r, hns[t], d_n, d_r, t1)  # dr = dn * hn * r * (1 - r)
        dgates_h[t][:, :2 * hidden] = dgates[t][:, :2 * hidden]
        xp.multiply(g_h, z, out=carry)
        gemm_add(xp, run, dgates_h[t], wh, carry)
    return carry


def plain_forward(xp: Any, gates, ys, wh_t, h0, reverse: bool, mode: str, run=PLAIN) -> None:
    """One rnn_tanh / rnn_relu direction: ``gates`` (T, N, H) holds the input projections plus both biases."""
    h = h0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        gemm_add(xp, run, h, wh_t, g)
        if mode == "rnn_relu":
            xp.maximum(g, 0, out=ys[t])
        else:
            xp.tanh(g, out=ys[t])
        h = ys[t]


def plain_backward(xp: Any, ys, wh, h0, dy, dh, dgates, reverse: bool, mode: str, run=PLAIN):
    """BPTT of one rnn_tanh / rnn_relu direction from its outputs ``ys``: fills ``dgates``; returns dh0."""
    carry = xp.zeros_like(h0) if dh is None else dh.copy()
    for t in _steps(ys.shape[0], not reverse):
        d = dgates[t]
        xp.add(dy[t], carry, out=d)
        if mode == "rnn_relu":
            xp.multiply(d, ys[t] > 0, out=d)
        else:
            xp.multiply(d, 1 - ys[t] * ys[t], out=d)
        run.matmul(xp, d, wh, out=carry)
    return carry
