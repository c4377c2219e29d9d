"""``RNN``: the fused multi-layer recurrent op (MXNet's src/operator/rnn.cc): rnn_relu, rnn_tanh, lstm, gru;
several layers, bidirectional, dropout between layers, the final states as extra outputs.

Inputs: ``data`` (T, N, I), ``parameters`` (one flat vector), ``state`` (L*D, N, H) and, for
LSTM, ``state_cell`` (L*D, N, H). The flat vector holds, as cuDNN and MXNet lay it out, every
weight first — per layer, per direction, ``W_i2h`` (G*H, I_l) then ``W_h2h`` (G*H, H) — then
every bias the same way (``b_i2h``, ``b_h2h``, each G*H). Gate order: LSTM i, f, g, o; GRU r, z, n
with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.

LSTM with ``projection_size`` P (LSTMP, Sak et al. 2014) outputs and feeds back ``r = W_hr h``
(no bias) instead of ``h``: per layer and direction the weights are ``W_i2h`` (4H, I_l),
``W_h2h`` (4H, P) then ``W_h2r`` (P, H); ``state`` and the output have P features (the cell
state keeps H). ``lstm_state_clip_min``/``_max`` clip the cell state after each step (its gradient
stops where it was clipped); with ``lstm_state_clip_nan`` a NaN cell becomes ``lstm_state_clip_max``.
MXNet 1.9.1 runs projection only in inference on CPU and clipping only on cuDNN; here both run
everywhere, with gradients.

Backward recomputes the forward pass (no cache survives between the two engine ops) and runs
back-propagation through time in the same vectorised form.

>>> import mxasync as mx
>>> from mxasync.operator.nn.rnn import rnn_param_size
>>> rnn_param_size("lstm", input_size=3, state_size=4, num_layers=2, bidirectional=True)
736
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import Field

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..kernels._runner import PLAIN
from ..kernels.dropout import dropout
from ..numpy_overrides import register_numpy
from ..params import OpParam

__all__ = ["RNNParam", "rnn_param_size"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class RNNParam(OpParam):
    state_size: int = Field(ge=1, description="the number of hidden units H")
    num_layers: int = Field(ge=1, description="the number of stacked layers L")
    bidirectional: bool = Field(False, description="run each layer in both directions (D=2) and concatenate")
    mode: Literal["rnn_relu", "rnn_tanh", "lstm", "gru"] = Field(description="the recurrent cell")
    p: float = Field(0.0, ge=0, lt=1, description="dropout rate on each layer's output but the last (training)")
    state_outputs: bool = Field(False, description="also output the final hidden (and, for LSTM, cell) states")
    projection_size: int | None = Field(None, ge=1, description="LSTMP: the size P of the projected hidden state")
    lstm_state_clip_min: float | None = Field(None, description="LSTM: clip the cell state to at least this")
    lstm_state_clip_max: float | None = Field(None, description="LSTM: clip the cell state to at most this")
    lstm_state_clip_nan: bool = Field(False, description="LSTM with clipping: a NaN cell state becomes the maximum")
    use_sequence_length: bool = Field(False, description="per-sequence lengths input (not supported)")


def rnn_param_size(mode: str, input_size: int, state_size: int, num_layers: int, bidirectional: bool,
                   projection_size: int | None = None) -> int:
    """The length of the flat ``parameters`` vector."""
    g, h, d = GATES[mode], state_size, 2 if bidirectional else 1
    r = projection_size or h
    size = 0
    for layer in range(num_layers):
        in_l = input_size if layer == 0 else d * r
        size += d * (g * h * (in_l + r) + 2 * g * h + (r * h if projection_size else 0))
    return size


def _width(p):
    """The features of the hidden state fed back and output: P with a projection, else H."""
    return p.projection_size or p.state_size


def _slices(p, input_size):
    """Per (layer, direction): the offsets of W_i2h, W_h2h, b_i2h, b_h2h (and W_h2r) in the flat vector."""
    g, h, d, r = GATES[p.mode], p.state_size, 2 if p.bidirectional else 1, _width(p)
    out, off = [], 0
    for layer in range(p.num_layers):
        in_l = input_size if layer == 0 else d * r
        for _ in range(d):
            wx = (off, (g * h, in_l))
            off += g * h * in_l
            wh = (off, (g * h, r))
            off += g * h * r
            entry = [wx, wh]
            if p.projection_size:
                entry.append((off, (r, h)))
                off += r * h
            out.append(entry)
    for entry in out:
        entry.insert(2, (off, (g * h,)))
        off += g * h
        entry.insert(3, (off, (g * h,)))
        off += g * h
    return out  # [W_i2h, W_h2h, b_i2h, b_h2h(, W_h2r)]


def _arguments(p):
    return ["data", "parameters", "state"] + (["state_cell"] if p.mode == "lstm" else [])


def _outputs(p):
    names = ["output"]
    if p.state_outputs:
        names += ["state_output"] + (["statecell_output"] if p.mode == "lstm" else [])  # MXNet's names
    return names


class _RNNProperty(FunctionalProperty):
    float16_in_float32 = True

    def list_arguments(self):
        return _arguments(self.params)

    def list_outputs(self):
        return _outputs(self.params) + (["dropout_masks"] if self._has_masks() else [])

    def num_outputs(self):
        return len(self.list_outputs())

    def num_visible_outputs(self):
        return len(_outputs(self.params))

    def _has_masks(self):
        return self.params.p > 0 and self.params.num_layers > 1

    def _check_lstm_options(self):
        p = self.params
        if p.mode != "lstm" and (p.projection_size or p.lstm_state_clip_min is not None
                                 or p.lstm_state_clip_max is not None):
            raise self.error(f"projection_size and lstm_state_clip_* need mode='lstm', not {p.mode!r}")
        if p.projection_size and p.projection_size > p.state_size:
            raise self.error(f"projection_size={p.projection_size} is larger than state_size={p.state_size}")
        lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
        if (lo is None) != (hi is None):
            raise self.error("lstm_state_clip_min and lstm_state_clip_max must be given together")
        if lo is not None and hi < lo:
            raise self.error(f"lstm_state_clip_max={hi} is below lstm_state_clip_min={lo}")

    def infer_shape(self, in_shapes):
        p = self.params
        self._check_lstm_options()
        if p.use_sequence_length:
            raise self.error("use_sequence_length=True is not supported; pad the sequences or use SequenceMask")
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None] * self.num_outputs(), []
        if len(d) != 3:
            raise self.error(f"data has shape {tuple(d)}; it must be (sequence_length, batch_size, input_size)")
        steps, batch, inputs = d
        dirs = 2 if p.bidirectional else 1
        state = (p.num_layers * dirs, batch, _width(p))
        cell = (p.num_layers * dirs, batch, p.state_size)
        size = rnn_param_size(p.mode, inputs, p.state_size, p.num_layers, p.bidirectional, p.projection_size)
        if in_shapes[1] is not None and tuple(in_shapes[1]) != (size,):
            raise self.error(f"parameters has shape {tuple(in_shapes[1])} but mode={p.mode!r}, input size "
                             f"{inputs}, state_size={p.state_size}, num_layers={p.num_layers}"
                             f"{', bidirectional' if p.bidirectional else ''}"
                             f"{f', projection_size={p.projection_size}' if p.projection_size else ''} needs ({size},)")
        states = [state, cell][:len(in_shapes) - 2]
        for i, (s, want) in enumerate(zip(in_shapes[2:], states, strict=True), start=2):
            if s is not None and tuple(s) != want:
                raise self.error(f"{_arguments(p)[i]} has shape {tuple(s)} but needs {want}")
        outs = [(steps, batch, dirs * _width(p))]
        if p.state_outputs:
            outs += [state, cell] if p.mode == "lstm" else [state]
        if self._has_masks():
            outs.append((p.num_layers - 1, steps, batch, dirs * _width(p)))
        return [tuple(d), (size,)] + states, outs, []


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _clip_cell(xp, p, c):
    """The cell state clipped as the params ask, and the mask of where its gradient passes (None: everywhere)."""
    lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
    if lo is None:
        return c, None
    mask = (c >= lo) & (c <= hi)
    if p.lstm_state_clip_nan:
        return xp.fmax(xp.fmin(c, hi), lo), mask  # fmin/fmax take the number over a NaN: NaN -> hi
    return xp.minimum(xp.maximum(c, lo), hi), mask


def _mm(xp, run, a, b):
    """``a @ b`` where ``a`` has few rows (the batch) and ``b`` is large, on the engine's BLAS (numpy's own,
    with its spinning pool threads, takes 10x longer on 2 busy cores), computed as ``(b.T @ a.T).T``:
    OpenBLAS runs that form about 1.5-2x faster for (20, 800) @ (800, 3200) (its small-M path splits the
    work poorly); the result is a transposed view, which the elementwise steps that follow take as it is."""
    return run.matmul(xp, b.T, a.T).T


def _run_direction(xp, p, xw, wh, bh, h, c, reverse, whr=None, keep=True, run=PLAIN):
    """One direction of one layer. ``xw``: the input projections (T, N, G*H) with b_i2h added; ``whr``
    the LSTMP projection. Returns the outputs (T, N, H or P), the final h (or r) and c, and what
    backward needs (an empty list when ``keep`` is False: a forward pass alone keeps nothing)."""
    mode = p.mode
    steps, batch = xw.shape[0], xw.shape[1]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    y = xp.empty((steps, batch, whr.shape[0] if whr is not None else wh.shape[1]), dtype=xw.dtype)
    cache = []
    wh_t = wh.T
    if mode != "gru":
        xw = xw + bh  # b_h2h joins the input projection once (GRU keeps it apart: r gates W_hn h + b_hn)
    for t in order:
        hw = _mm(xp, run, h, wh_t)
        if mode == "lstm":
            hw += xw[t]
            gates = _sigmoid(xp, hw)  # i, f, o; the g quarter is overwritten with its tanh
            quarter = gates.shape[1] // 4
            g = gates[:, 2 * quarter:3 * quarter]
            xp.tanh(hw[:, 2 * quarter:3 * quarter], out=g)
            i, f, o = gates[:, :quarter], gates[:, quarter:2 * quarter], gates[:, 3 * quarter:]
            c_new, mask = _clip_cell(xp, p, f * c + i * g)
            tc = xp.tanh(c_new)
            h_new = hp = o * tc
            if whr is not None:
                h_new = _mm(xp, run, hp, whr.T)
            if keep:
                cache.append((t, h, c, i, f, g, o, tc, hp, mask))
            c = c_new
        elif mode == "gru":
            hw += bh
            xr, xz, xn = xp.split(xw[t], 3, axis=1)
            hr, hz, hn = xp.split(hw, 3, axis=1)
            r, z = _sigmoid(xp, xr + hr), _sigmoid(xp, xz + hz)
            n = xp.tanh(xn + r * hn)
            h_new = (1 - z) * n + z * h
            if keep:
                cache.append((t, h, r, z, n, hn))
        else:
            hw += xw[t]
            h_new = xp.maximum(hw, 0) if mode == "rnn_relu" else xp.tanh(hw)
            if keep:
                cache.append((t, h, h_new))
        h = h_new
        y[t] = h
    return y, h, c, cache


def _back_direction(xp, mode, wx_shape, wh, cache, dy, dh, dc, whr=None, run=PLAIN):
    """BPTT of one direction: returns d(xw) (T, N, G*H), dWh, dbh, the gradients of the initial h, c
    and dWhr (None without a projection)."""
    steps = dy.shape[0]
    dxw = xp.zeros((steps, dy.shape[1], wh.shape[0]), dtype=dy.dtype)
    # the weight gradients sum over every step: gather the factors, multiply once after the loop
    dhws = dxw if mode != "gru" else xp.empty_like(dxw)
    h_prevs = xp.empty((steps,) + cache[0][1].shape, dtype=dy.dtype) if cache else None
    g_hs = xp.empty(dy.shape, dtype=dy.dtype) if whr is not None else None
    hps = xp.empty((steps, dy.shape[1], whr.shape[1]), dtype=dy.dtype) if whr is not None else None
    for entry in reversed(cache):
        t, h_prev = entry[0], entry[1]
        g_h = dy[t] + dh
        if mode == "lstm":
            _, _, c_prev, i, f, g, o, tc, hp, mask = entry
            if whr is not None:
                g_hs[t], hps[t] = g_h, hp
                g_h = _mm(xp, run, g_h, whr)
            d_o = g_h * tc
            g_c = g_h * o * (1 - tc * tc) + dc
            if mask is not None:
                g_c = g_c * mask
            gates = xp.concatenate([g_c * g * i * (1 - i), g_c * c_prev * f * (1 - f), g_c * i * (1 - g * g),
                                    d_o * o * (1 - o)], axis=1)
            dxw[t] = gates
            dhw = gates
            dc = g_c * f
            dh_direct = 0
        elif mode == "gru":
            _, _, r, z, n, hn = entry
            d_n = g_h * (1 - z) * (1 - n * n)
            d_z = g_h * (h_prev - n) * z * (1 - z)
            d_r = d_n * hn * r * (1 - r)
            dxw[t] = xp.concatenate([d_r, d_z, d_n], axis=1)
            dhw = dhws[t]
            dhw[...] = dxw[t]
            dhw[:, 2 * d_n.shape[1]:] *= r
            dh_direct = g_h * z
        else:
            out = entry[2]
            d_pre = g_h * (out > 0) if mode == "rnn_relu" else g_h * (1 - out * out)
            dxw[t] = d_pre
            dhw = d_pre
            dh_direct = 0
        h_prevs[t] = h_prev
        dh = _mm(xp, run, dhw, wh) + dh_direct
    flat = dhws.reshape(-1, dhws.shape[2])
    mm = functools.partial(run.matmul, xp)
    dwh = mm(flat.T, h_prevs.reshape(-1, h_prevs.shape[2])) if cache else xp.zeros_like(wh)
    dbh = flat.sum(axis=0)
    dwhr = mm(g_hs.reshape(-1, g_hs.shape[2]).T, hps.reshape(-1, hps.shape[2])) if whr is not None else None
    return dxw, dwh, dbh, dh, dc, dwhr


def _unpack(xp, params_vec, p, input_size):
    """Per (layer, direction): [W_i2h, W_h2h, b_i2h, b_h2h, W_h2r or None]."""
    layers = []
    for entry in _slices(p, input_size):
        arrays = [params_vec[o:o + _size(s)].reshape(s) for o, s in entry]
        layers.append(arrays + [None] * (5 - len(arrays)))
    return layers


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _project(xp, x, w, b=None, run=PLAIN):
    """``x @ w.T (+ b)`` for (T, N, K) ``x`` as one (T*N, K) matrix product: numpy's matmul would run T
    small products one after the other (18x slower at T=30, N=20)."""
    y = run.matmul(xp, x.reshape(-1, x.shape[-1]), w.T)
    if b is not None:
        y += b
    return y.reshape(x.shape[:-1] + (w.shape[0],))


def _forward_all(xp, p, data, params_vec, h0, c0, masks, keep=True, run=PLAIN):
    """The whole stack; returns the output, final states, and per (layer, dir) the caches and inputs
    (none when ``keep`` is False)."""
    dirs = 2 if p.bidirectional else 1
    weights = _unpack(xp, params_vec, p, data.shape[2])
    x = data
    hy, cy, record = [], [], []
    for layer in range(p.num_layers):
        if layer > 0 and masks is not None:
            x = x * masks[layer - 1]
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wx, wh, bx, bh, whr = weights[k]
            xw = _project(xp, x, wx, bx, run=run)
            c_init = c0[k] if c0 is not None else None
            y, h, c, cache = _run_direction(xp, p, xw, wh, bh, h0[k], c_init, d == 1, whr, keep, run)
            outs.append(y)
            hy.append(h)
            cy.append(c)
            if keep:
                record.append((x, cache))
        x = outs[0] if dirs == 1 else xp.concatenate(outs, axis=2)
    return x, hy, cy, record, weights


def _masks(xp, p, op_ctx, data):
    if not (p.p > 0 and p.num_layers > 1):
        return None
    dirs = 2 if p.bidirectional else 1
    shape = (p.num_layers - 1, data.shape[0], data.shape[1], dirs * _width(p))
    if not op_ctx.is_train:
        return xp.ones(shape, dtype=data.dtype)
    rng = op_ctx.requested[0].get_random()
    return dropout(xp, xp.ones(shape, dtype=data.dtype), p.p, rng=rng)[1]


def _rnn_fwd(xp, p, op_ctx, data, params_vec, h0, c0=None, run=PLAIN):
    masks = _masks(xp, p, op_ctx, data)
    out, hy, cy, _, _ = _forward_all(xp, p, data, params_vec, h0, c0, masks, keep=False, run=run)
    results = [out]
    if p.state_outputs:
        results.append(xp.stack(hy))
        if p.mode == "lstm":
            results.append(xp.stack(cy))
    if masks is not None:
        results.append(masks)
    return tuple(results) if len(results) > 1 else out


def _rnn_bwd(xp, p, og, ins, outs, run=PLAIN):
    data, params_vec, h0 = ins[0], ins[1], ins[2]
    c0 = ins[3] if p.mode == "lstm" else None
    masks = outs[-1] if (p.p > 0 and p.num_layers > 1) else None
    _, _, _, record, weights = _forward_all(xp, p, data, params_vec, h0, c0, masks, run=run)
    dirs = 2 if p.bidirectional else 1
    hidden = _width(p)
    dhy = og[1] if p.state_outputs else None
    dcy = og[2] if p.state_outputs and p.mode == "lstm" else None
    grads = {}  # k -> (dwx, dwh, dbx, dbh[, dwhr])
    dh0 = xp.zeros_like(h0)
    dc0 = xp.zeros_like(c0) if p.mode == "lstm" else None
    dy = og[0]
    mm = functools.partial(run.matmul, xp)
    for layer in range(p.num_layers - 1, -1, -1):
        dx = None
        for d in range(dirs):
            k = layer * dirs + d
            x, cache = record[k]
            wx, wh, _, _, whr = weights[k]
            dy_dir = dy[:, :, d * hidden:(d + 1) * hidden]
            dh = dhy[k] if dhy is not None else xp.zeros_like(h0[k])
            dc = dcy[k] if dcy is not None else (xp.zeros_like(c0[k]) if p.mode == "lstm" else None)
            dxw, dwh, dbh, dh_init, dc_init, dwhr = _back_direction(xp, p.mode, wx.shape, wh, cache, dy_dir, dh, dc,
                                                                    whr, run)
            flat = dxw.reshape(-1, dxw.shape[2])
            grads[k] = (mm(flat.T, x.reshape(-1, x.shape[2])), dwh, flat.sum(axis=0), dbh) + (
                (dwhr,) if whr is not None else ())
            term = mm(flat, wx).reshape(dxw.shape[:2] + (wx.shape[1],))
            dx = term if dx is None else dx + term
            dh0[k] = dh_init
            if dc0 is not None:
                dc0[k] = dc_init
        if layer > 0 and masks is not None:
            dx = dx * masks[layer - 1]
        dy = dx
    d_params = xp.zeros_like(params_vec)
    for k, entry in enumerate(_slices(p, data.shape[2])):
        for (off, shape), g in zip(entry, grads[k], strict=True):
            d_params[off:off + _size(shape)] = g.reshape(-1)
    result = [dy, d_params, dh0]
    if p.mode == "lstm":
        result.append(dc0)
    return result


defop("RNN", param=RNNParam, base=_RNNProperty, arguments=("data", "parameters", "state", "state_cell"),
      deps="og,in,out", wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,), fwd=_rnn_fwd, bwd=_rnn_bwd,
      doc="A fused stack of recurrent layers (rnn_relu, rnn_tanh, lstm, gru) over (T, N, I) data with one flat "
          "parameter vector (cuDNN's layout), optional bidirectional layers, dropout between layers and the "
          "final states as extra outputs.")
register_numpy("RNN", _rnn_fwd, _rnn_bwd)  # its GEMMs on the engine's BLAS
