"""``ctc_loss`` / ``CTCLoss``: Connectionist Temporal Classification (Graves et al. 2006; MXNet's
src/operator/nn/ctc_loss.cc).

``data`` (T, N, C) holds unnormalised activations (a softmax over C is applied inside);
``label`` (N, L) the label indices, padded with 0 (``blank_label='first'``, blank is
channel 0) or -1 (``'last'``, blank is channel C-1). The output is the negative
log-likelihood of each sequence, (N,). The forward-backward recursions run in log
space, vectorised over the batch; the gradient w.r.t. ``data`` is ``softmax - posterior``.

>>> import mxasync as mx
>>> x = mx.nd.zeros((2, 1, 2))                       # T=2, one sequence, blank + one symbol
>>> round(float(mx.nd.ctc_loss(x, mx.nd.array([[1]])).asscalar()), 4)   # -log(3/4): paths "1-", "-1", "11"
0.2877
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["CTCLossParam"]

_NEG_INF = -1e30  # log(0) that keeps the arithmetic finite


class CTCLossParam(OpParam):
    use_data_lengths: bool = Field(False, description="take each sequence's length from data_lengths (else T)")
    use_label_lengths: bool = Field(False, description="take each label's length from label_lengths (else up to "
                                                       "the first padding value)")
    blank_label: Literal["first", "last"] = Field("first", description="the blank is channel 0 ('first', labels "
                                                                       "padded with 0) or C-1 ('last', padded "
                                                                       "with -1)")


def _arguments(p):
    return ["data", "label"] + (["data_lengths"] if p.use_data_lengths else []) + \
        (["label_lengths"] if p.use_label_lengths else [])


class _CTCLossProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, lab = in_shapes[0], in_shapes[1]
        if d is None:
            return list(in_shapes), [None], []
        if len(d) != 3:
            raise self.error(f"data has shape {tuple(d)}; it must be (sequence_length, batch_size, alphabet_size)")
        if lab is not None and (len(lab) != 2 or lab[0] != d[1]):
            raise self.error(f"label has shape {tuple(lab)} but data {tuple(d)} needs ({d[1]}, label_length)")
        lengths = [(d[1],)] * (len(in_shapes) - 2)
        return [d, lab, *lengths], [(d[1],)], []


def _split(p, inputs):
    data, label, rest = inputs[0], inputs[1], list(inputs[2:])
    data_lengths = rest.pop(0) if p.use_data_lengths else None
    label_lengths = rest.pop(0) if p.use_label_lengths else None
    return data, label, data_lengths, label_lengths


def _lattice(xp, p, data, label, data_lengths, label_lengths):
    """Everything both passes need: log-softmax, the extended labels and their masks, the lengths."""
    steps, batch, alphabet = data.shape
    x = data.astype("float64")
    logp = x - x.max(axis=2, keepdims=True)
    logp = logp - xp.log(xp.exp(logp).sum(axis=2, keepdims=True))
    lab = label.astype("int64")
    blank, pad = (0, 0) if p.blank_label == "first" else (alphabet - 1, -1)
    if label_lengths is not None:
        n_lab = label_lengths.astype("int64")
    else:  # up to the first padding value
        is_pad = lab == pad
        n_lab = xp.where(is_pad.any(axis=1), is_pad.argmax(axis=1), lab.shape[1])
    n_t = data_lengths.astype("int64") if data_lengths is not None else xp.full((batch,), steps, dtype="int64")
    width = 2 * lab.shape[1] + 1
    ext = xp.full((batch, width), blank, dtype="int64")  # blank, l1, blank, l2, ..., blank
    ext[:, 1::2] = xp.where(xp.arange(lab.shape[1])[None, :] < n_lab[:, None], lab, blank)
    ext = xp.clip(ext, 0, alphabet - 1)
    n_ext = 2 * n_lab + 1
    valid = xp.arange(width)[None, :] < n_ext[:, None]
    # a skip s-2 -> s is allowed onto a symbol that differs from the symbol two back
    skip = xp.zeros((batch, width), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (steps, batch, width)), axis=2)  # (T, N, S)
    emit = xp.where(valid[None], emit, _NEG_INF)
    return logp, ext, n_ext, n_t, valid, skip, emit


def _logaddexp(xp, *terms):
    """log(sum(exp(t))) over ``terms``, written out: CuPy's ufuncs have no ``reduce``."""
    out = terms[0]
    for t in terms[1:]:
        out = xp.logaddexp(out, t)
    return out


def _forward_backward(xp, p, data, label, data_lengths, label_lengths):
    logp, ext, n_ext, n_t, valid, skip, emit = _lattice(xp, p, data, label, data_lengths, label_lengths)
    steps, batch, width = emit.shape
    rows = xp.arange(batch)
    alpha = xp.full((steps, batch, width), _NEG_INF)
    alpha[0, :, 0] = emit[0, :, 0]
    alpha[0, :, 1] = xp.where(n_ext > 1, emit[0, :, 1], _NEG_INF)
    for t in range(1, steps):
        prev = alpha[t - 1]
        one = xp.concatenate([xp.full((batch, 1), _NEG_INF), prev[:, :-1]], axis=1)
        two = xp.concatenate([xp.full((batch, 2), _NEG_INF), prev[:, :-2]], axis=1)
        two = xp.where(skip, two, _NEG_INF)
        alpha[t] = _logaddexp(xp, prev, one, two) + emit[t]
    last = alpha[n_t - 1, rows]  # (N, S): each sequence at its own last step
    end = n_ext - 1
    log_lik = xp.logaddexp(last[rows, end], xp.where(end > 0, last[rows, xp.maximum(end - 1, 0)], _NEG_INF))
    beta = xp.full((steps, batch, width), _NEG_INF)
    s = xp.arange(width)[None, :]
    at_end = (s == end[:, None]) | (s == end[:, None] - 1)
    for t in range(steps - 1, -1, -1):
        start = t == n_t - 1  # (N,): the sequences whose last step is t
        nxt = beta[t + 1] if t + 1 < steps else xp.full((batch, width), _NEG_INF)
        one = xp.concatenate([nxt[:, 1:], xp.full((batch, 1), _NEG_INF)], axis=1)
        two = xp.concatenate([nxt[:, 2:], xp.full((batch, 2), _NEG_INF)], axis=1)
        two = xp.where(xp.concatenate([skip[:, 2:], xp.zeros((batch, 2), dtype=bool)], axis=1), two, _NEG_INF)
        inner = _logaddexp(xp, nxt, one, two) + emit[t]
        beta[t] = xp.where(start[:, None], xp.where(at_end & valid, emit[t], _NEG_INF),
                           xp.where((t < n_t - 1)[:, None], inner, _NEG_INF))
    return logp, ext, n_t, emit, alpha, beta, log_lik


def _ctc_loss(xp, p, *inputs):
    data, label, data_lengths, label_lengths = _split(p, inputs)
    *_, log_lik = _forward_backward(xp, p, data, label, data_lengths, label_lengths)
    return (-log_lik).astype(data.dtype)


def _ctc_loss_bwd(xp, p, og, ins, outs):
    data, label, data_lengths, label_lengths = _split(p, ins)
    logp, ext, n_t, emit, alpha, beta, log_lik = _forward_backward(xp, p, data, label, data_lengths, label_lengths)
    steps, batch, alphabet = data.shape
    # posterior of each lattice node, summed per channel: exp(alpha + beta - emit - log_lik)
    node = xp.exp(xp.clip(alpha + beta - emit - log_lik[None, :, None], -700, 0))
    node = xp.where(emit > _NEG_INF / 2, node, 0.0)
    post = xp.zeros((steps, batch, alphabet))
    idx = xp.broadcast_to(ext[None], node.shape)
    t_idx = xp.broadcast_to(xp.arange(steps)[:, None, None], node.shape)
    b_idx = xp.broadcast_to(xp.arange(batch)[None, :, None], node.shape)
    xp.add.at(post, (t_idx, b_idx, idx), node)
    grad = xp.exp(logp) - post
    grad = xp.where((xp.arange(steps)[:, None] < n_t[None, :])[:, :, None], grad, 0.0)
    grad = grad * og[0].astype("float64")[None, :, None]
    return [grad.astype(data.dtype)] + [None] * (len(ins) - 1)


defop("CTCLoss", param=CTCLossParam, base=_CTCLossProperty,
      arguments=("data", "label", "data_lengths", "label_lengths"), args=_arguments, deps="og,in",
      aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"), fwd=_ctc_loss, bwd=_ctc_loss_bwd,
      doc="Connectionist Temporal Classification loss of (T, N, C) activations against (N, L) padded labels: "
          "the negative log-likelihood of each sequence, (N,).")
