"""The per-direction loops of the fused ``RNN`` op: one layer, one direction, forward and back-propagation
through time, for lstm, gru and the plain tanh / relu cell (``operator/nn/rnn.py`` runs the stack).

Every loop works in arrays its caller allocated, each step's part contiguous and *feature-major*:
``gates`` is (T, G*H, N), so step ``t`` is the (G*H, N) block ``gates[t]`` whose gate ``k`` is a
block of rows; the hidden states ``ht`` are (T, R, N).  The recurrent product of a step is then
``W_h2h @ h`` (G*H, R) x (R, N), which OpenBLAS runs 15-30 % faster than ``h.T @ W_h2h.T`` for a
batch of 64 (2-core Xeon, 1024x256 weights), accumulated straight onto the step's gates (BLAS beta
= 1); backward's ``W_h2h.T @ dgates[t]`` has the same fast shape.  Elementwise work on a step's
contiguous blocks runs 2-3x faster than on the same blocks cut out of a (T*N, G*H) or (G*H, T*N)
matrix.  The caller turns these layouts into the op's (T, N, R) once per direction.

``gates`` arrives holding the input projection of every step plus the biases (one GEMM over all
steps, done by the caller) and leaves holding the gate activations; the cell states, ``tanh(c)``,
GRU's ``W_hn h + b_hn`` and the hidden states go to the caller's arrays too, so a training forward
fills MXNet's *reserve space* and backward reads it instead of running the forward again.
Elementwise work is written in place (``out=``) into buffers made once per call: a step allocates
nothing.

The sigmoid gates are computed as ``0.5 * tanh(x / 2) + 0.5``: the caller halves their weight rows
and biases (exact in binary floating point), so one ``tanh`` over a step's gate block serves sigmoid
and tanh gates alike.  LSTM's gates are kept in the order o, i, f, g here (MXNet's vector holds
i, f, g, o), which makes the three sigmoid gates one block; ``LSTM_ORDER`` maps them.

Back-propagation gathers the gate gradients of every step (``dgates``, and GRU's ``dgates_h`` for
the recurrent side) so the caller computes the weight gradients as one GEMM over all steps.

>>> import numpy as np
>>> gates = np.zeros((2, 1, 1)); ht = np.empty((2, 1, 1))
>>> plain_forward(np, gates, ht, np.ones((1, 1)), np.zeros((1, 1)), False, "rnn_tanh")
>>> ht.ravel().tolist()
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


def _previous(t: int, reverse: bool) -> int:
    """The step whose state step ``t`` starts from."""
    return t + 1 if reverse else t - 1


def _half_sigmoid_(xp, x) -> None:
    """``x = 0.5 * x + 0.5`` in place: ``tanh(z / 2)`` becomes ``sigmoid(z)``."""
    xp.multiply(x, 0.5, out=x)
    xp.add(x, 0.5, out=x)


def _blocks(x, hidden: int, count: int) -> list:
    return [x[k * hidden:(k + 1) * hidden] for k in range(count)]


def lstm_forward(xp: Any, st: dict, wh, h0, c0, reverse: bool, whr=None, clip=None, run=PLAIN) -> None:
    """One LSTM direction. ``st``: ``gates`` (T, 4H, N) holding the input projections (o, i, f rows
    halved), ``c`` and ``tc`` (T, H, N) for the cell states and their tanh, ``ht`` (T, R, N) the
    hidden states; with a projection ``whr`` (P, H) also ``hp`` (T, H, N), the h before it; with
    ``clip`` (``(lo, hi, nan_to_hi)``) ``clip_mask`` (T, H, N), 1 where the cell passes its gradient.
    ``wh`` (4H, R) is in the gates' order and scaling; ``h0``, ``c0`` the initial states (R, N), (H, N)."""
    gates, cs, tcs, hts = st["gates"], st["c"], st["tc"], st["ht"]
    hidden = cs.shape[1]
    tmp = xp.empty(c0.shape, dtype=gates.dtype)
    h, c_prev = h0, c0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        gemm_add(xp, run, wh, h, g)
        xp.tanh(g, out=g)
        _half_sigmoid_(xp, g[:3 * hidden])
        o, i, f, cand = _blocks(g, hidden, 4)
        ct = cs[t]
        xp.multiply(f, c_prev, out=ct)
        xp.multiply(i, cand, out=tmp)
        xp.add(ct, tmp, out=ct)
        if clip is not None:
            _clip_(xp, ct, clip, st["clip_mask"][t])
        xp.tanh(ct, out=tcs[t])
        if whr is None:
            xp.multiply(o, tcs[t], out=hts[t])
        else:
            xp.multiply(o, tcs[t], out=st["hp"][t])
            run.matmul(xp, whr, st["hp"][t], out=hts[t])
        h, c_prev = hts[t], ct


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


def lstm_backward(xp: Any, st: dict, wh, c0, dy, dh, dc, dgates, reverse: bool, whr=None, g_r=None, run=PLAIN):
    """BPTT of one LSTM direction over what :func:`lstm_forward` left in ``st``. ``wh`` (4H, R) unscaled,
    in the gates' order; ``dy`` (T, R, N) the gradients of the hidden states; ``dh`` (R, N), ``dc``
    (H, N) those of the final states (None: zero). Fills ``dgates`` (T, 4H, N) (and ``g_r`` (T, P, N),
    the gradients reaching the projected states, with ``whr`` (P, H)); returns the gradients of h0
    and c0, (R, N) and (H, N)."""
    gates, cs, tcs = st["gates"], st["c"], st["tc"]
    hidden = cs.shape[1]
    carry = xp.zeros(dy.shape[1:], dtype=gates.dtype) if dh is None else dh.copy()  # from the step after
    g_c_next = xp.zeros(c0.shape, dtype=gates.dtype) if dc is None else dc.copy()
    g_c, t1 = (xp.empty(c0.shape, dtype=gates.dtype) for _ in range(2))
    g_out = xp.empty(dy.shape[1:], dtype=gates.dtype)
    g_h = g_out if whr is None else xp.empty(c0.shape, dtype=gates.dtype)
    wh_t = wh.T
    steps = gates.shape[0]
    for t in _steps(steps, not reverse):
        o, i, f, cand = _blocks(gates[t], hidden, 4)
        tc = tcs[t]
        c_prev = c0 if t == (steps - 1 if reverse else 0) else cs[_previous(t, reverse)]
        xp.add(dy[t], carry, out=g_out)
        if whr is not None:
            g_r[t] = g_out
            run.matmul(xp, whr.T, g_out, out=g_h)
        # g_c = g_h * o * (1 - tanh(c)^2) + the cell gradient from the step after
        xp.multiply(tc, tc, out=t1)
        xp.subtract(1, t1, out=t1)
        xp.multiply(t1, o, out=t1)
        xp.multiply(t1, g_h, out=g_c)
        xp.add(g_c, g_c_next, out=g_c)
        if "clip_mask" in st:
            xp.multiply(g_c, st["clip_mask"][t], out=g_c)
        d_o, d_i, d_f, d_g = _blocks(dgates[t], hidden, 4)
        _sigmoid_grad(xp, o, tc, g_h, d_o, t1)
        _sigmoid_grad(xp, i, cand, g_c, d_i, t1)
        _sigmoid_grad(xp, f, c_prev, g_c, d_f, t1)
        xp.multiply(cand, cand, out=t1)  # tanh' = 1 - g^2
        xp.subtract(1, t1, out=t1)
        xp.multiply(t1, i, out=t1)
        xp.multiply(t1, g_c, out=d_g)
        xp.multiply(g_c, f, out=g_c_next)
        run.matmul(xp, wh_t, dgates[t], out=carry)
    return carry, g_c_next


def _sigmoid_grad(xp, s, factor, grad, out, tmp) -> None:
    """``out = grad * factor * s * (1 - s)``: the gradient through a sigmoid gate ``s`` scaling ``factor``."""
    xp.subtract(1, s, out=tmp)
    xp.multiply(tmp, s, out=tmp)
    xp.multiply(tmp, factor, out=tmp)
    xp.multiply(tmp, grad, out=out)


def gru_forward(xp: Any, st: dict, wh, bhn, h0, reverse: bool, run=PLAIN) -> None:
    """One GRU direction. ``st``: ``gates`` (T, 3H, N) holding the input projections (r, z rows halved,
    their recurrent biases included), ``hn`` (T, H, N) for ``W_hn h + b_hn``, ``ht`` (T, H, N). ``wh``
    (3H, H) with the r, z rows halved; ``bhn`` the n part of b_h2h; ``h0`` (H, N)."""
    gates, hns, hts = st["gates"], st["hn"], st["ht"]
    hidden = hns.shape[1]
    hw = xp.empty((3 * hidden, h0.shape[1]), dtype=gates.dtype)
    tmp = xp.empty(h0.shape, dtype=gates.dtype)
    bhn = bhn[:, None]
    h = h0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        run.matmul(xp, wh, h, out=hw)
        rz = g[:2 * hidden]
        xp.add(rz, hw[:2 * hidden], out=rz)
        xp.tanh(rz, out=rz)
        _half_sigmoid_(xp, rz)
        r, z, n = _blocks(g, hidden, 3)
        hn = hns[t]
        xp.add(hw[2 * hidden:], bhn, out=hn)
        xp.multiply(r, hn, out=tmp)
        xp.add(n, tmp, out=n)
        xp.tanh(n, out=n)
        xp.subtract(h, n, out=tmp)  # h' = n + z * (h - n)
        xp.multiply(tmp, z, out=tmp)
        xp.add(n, tmp, out=hts[t])
        h = hts[t]


def gru_backward(xp: Any, st: dict, wh, h0, dy, dh, dgates, dgates_h, reverse: bool, run=PLAIN):
    """BPTT of one GRU direction: fills ``dgates`` (T, 3H, N), the gradients of the input projections
    ``[dr, dz, dn]``, and ``dgates_h`` those of ``W_h h + b_h`` (``r * dn`` in the n block); ``wh``
    (3H, H) unscaled; ``dy`` (T, H, N). Returns the gradient of ``h0`` (H, N)."""
    gates, hns, hts = st["gates"], st["hn"], st["ht"]
    hidden = hns.shape[1]
    steps = gates.shape[0]
    carry = xp.zeros(h0.shape, dtype=gates.dtype) if dh is None else dh.copy()
    g_h, t1, t2 = (xp.empty(h0.shape, dtype=gates.dtype) for _ in range(3))
    wh_t = wh.T
    for t in _steps(steps, not reverse):
        r, z, n = _blocks(gates[t], hidden, 3)
        h_prev = h0 if t == (steps - 1 if reverse else 0) else hts[_previous(t, reverse)]
        d_r, d_z, d_n = _blocks(dgates[t], hidden, 3)
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
        dgh = dgates_h[t]
        xp.multiply(d_n, r, out=dgh[2 * hidden:])
        _sigmoid_grad(xp, r, hns[t], d_n, d_r, t1)  # dr = dn * hn * r * (1 - r)
        dgh[:2 * hidden] = dgates[t][:2 * hidden]
        xp.multiply(g_h, z, out=carry)
        gemm_add(xp, run, wh_t, dgh, carry)
    return carry


def plain_forward(xp: Any, gates, hts, wh, h0, reverse: bool, mode: str, run=PLAIN) -> None:
    """One rnn_tanh / rnn_relu direction: ``gates`` (T, H, N) holds the input projections plus both biases;
    the hidden states go to ``hts`` (T, H, N)."""
    h = h0
    for t in _steps(gates.shape[0], reverse):
        g = gates[t]
        gemm_add(xp, run, wh, h, g)
        if mode == "rnn_relu":
            xp.maximum(g, 0, out=hts[t])
        else:
            xp.tanh(g, out=hts[t])
        h = hts[t]


def plain_backward(xp: Any, hts, wh, dy, dh, dgates, reverse: bool, mode: str, run=PLAIN):
    """BPTT of one rnn_tanh / rnn_relu direction from its hidden states ``hts`` (T, H, N): fills ``dgates``
    (T, H, N); returns the gradient of h0 (H, N)."""
    carry = xp.zeros(hts.shape[1:], dtype=dgates.dtype) if dh is None else dh.copy()
    slope = xp.empty(hts.shape[1:], dtype=dgates.dtype)
    wh_t = wh.T
    for t in _steps(hts.shape[0], not reverse):
        d = dgates[t]
        xp.add(dy[t], carry, out=d)
        if mode == "rnn_relu":
            xp.greater(hts[t], 0, out=slope)
        else:
            xp.multiply(hts[t], hts[t], out=slope)
            xp.subtract(1, slope, out=slope)
        xp.multiply(d, slope, out=d)
        run.matmul(xp, wh_t, d, out=carry)
    return carry
