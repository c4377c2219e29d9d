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

A training forward keeps what backward needs in the *reserve space*, the op's last (hidden)
output, as MXNet's ``reserve_space``: the gate activations, cell states and layer outputs of every
step (``nn/rnn_stack.py``); the dropout masks are the hidden output before it.  Backward reads them
and runs no forward.  An imperative call in inference gets an empty reserve (the op lists it in
``train_only_outputs``); a bound graph has one allocated at bind, which an inference forward leaves
unwritten.  The cell loops are in ``kernels/rnn_cells.py``.

>>> import mxasync as mx
>>> from mxasync.operator.nn.rnn import rnn_param_size
>>> rnn_param_size("lstm", input_size=3, state_size=4, num_layers=2, bidirectional=True)
736
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...runtime.resource import ResourceRequest
from ..base import Operator, OperatorProperty
from ..numpy_overrides import register_numpy
from ..params import OpParam
from ..registry import find_override, register_op
from .rnn_stack import ReserveLayout, has_dropout, rnn_backward, rnn_forward, rnn_param_size, width

__all__ = ["RNNParam", "RNNProperty", "rnn_param_size"]


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


def _arguments(p):
    return ["data", "parameters", "state"] + (["state_cell"] if p.mode == "lstm" else [])


def _outputs(p):
    names = ["output"]
    if p.state_outputs:
        names += ["state_output"] + (["statecell_output"] if p.mode == "lstm" else [])  # MXNet's names
    return names


_DOC = ("A fused stack of recurrent layers (rnn_relu, rnn_tanh, lstm, gru) over (T, N, I) data with one flat "
        "parameter vector (cuDNN's layout), optional bidirectional layers, dropout between layers and the "
        "final states as extra outputs.")


class _RNNOperator(Operator):
    """Runs the stack (``nn/rnn_stack.py``) with the backend's runner."""

    def __init__(self, params: RNNParam, xp, fwd, bwd):
        self.p, self.xp, self.fwd, self.bwd = params, xp, fwd, bwd

    def forward(self, op_ctx, in_data, req, out_data, aux):
        self.fwd(self.xp, self.p, op_ctx, in_data, req, out_data)

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        self.bwd(self.xp, self.p, op_ctx, out_grad, in_data, out_data, req, in_grad)


@register_op("RNN", param=RNNParam, doc=_DOC)
class RNNProperty(OperatorProperty):
    """The fused RNN: its outputs, then the hidden dropout masks (with dropout) and reserve space."""

    arguments = ("data", "parameters", "state", "state_cell")
    float16_in_float32 = True

    def list_arguments(self):
        return _arguments(self.params)

    def list_outputs(self):
        return _outputs(self.params) + (["dropout_masks"] if has_dropout(self.params) else []) + ["reserve_space"]

    def num_outputs(self):
        return len(self.list_outputs())

    def num_visible_outputs(self):
        return len(_outputs(self.params))

    def train_only_outputs(self) -> list[int]:
        """The dropout masks and the reserve space: what a training forward keeps for its backward."""
        return list(range(self.num_visible_outputs(), self.num_outputs()))

    def forward_resource(self):
        return [ResourceRequest.TEMP_SPACE] + ([ResourceRequest.RANDOM] if has_dropout(self.params) else [])

    def backward_resource(self):
        return [ResourceRequest.TEMP_SPACE]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        visible = self.num_visible_outputs()
        return list(out_grad[:visible]) + list(in_data) + list(out_data[visible:])

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        backend = get_backend(ctx.device_type)
        return _RNNOperator(self.params, backend.xp, find_override("RNN", backend, rnn_forward),
                            find_override("RNN.backward", backend, rnn_backward))

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
        state = (p.num_layers * dirs, batch, width(p))
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
        outs = [(steps, batch, dirs * width(p))]
        if p.state_outputs:
            outs += [state, cell] if p.mode == "lstm" else [state]
        if has_dropout(p):
            outs.append((p.num_layers - 1, steps, batch, dirs * width(p)))
        outs.append((ReserveLayout(p, steps, batch, inputs).size(),))
        return [tuple(d), (size,)] + states, outs, []




register_numpy("RNN", rnn_forward, rnn_backward)  # its GEMMs on the engine's BLAS
