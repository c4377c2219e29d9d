"""``VariationalDropoutCell`` (one dropout mask per sequence, Gal & Ghahramani 2016), ``LSTMPCell``
(LSTM with a projected recurrent state, Sak et al. 2014) and ``dynamic_unroll`` (a cell run over a
sequence by ``contrib.foreach``, one graph node however long the sequence).

>>> import mxasync as mx
>>> cell = LSTMPCell(8, 3, input_size=4)
>>> cell.initialize()
>>> out, (r, c) = cell.unroll(2, mx.nd.ones((5, 2, 4)), merge_outputs=True)
>>> out.shape, r.shape, c.shape
((5, 2, 3), (5, 3), (5, 8))
"""

from __future__ import annotations

from ....base import _as_list
from ...parameter import tensor_types
from ...rnn.rnn_cell import (
    HybridRecurrentCell,
    _format_sequence,
    _get_begin_state,
    _mask_sequence_variable_length,
)
from ...rnn.rnn_modifiers import ModifierCell

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Dropout on the inputs, the first state and the outputs of ``base_cell`` with masks drawn once
    per sequence (kept until :meth:`reset`, which ``unroll`` calls)."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0):
        if drop_states and getattr(base_cell, "_unrolled_only", False):
            raise AssertionError("BidirectionalCell doesn't support variational state dropout. Please add "
                                 "VariationalDropoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = drop_inputs, drop_states, drop_outputs
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(next_output), p=self.drop_outputs)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        if self.drop_states:  # the state mask is applied at every step
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length)
        # otherwise the masks are one dropout over the whole sequence, shared along time
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = isinstance(outputs, tensor_types) if merge_outputs is None else merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    """LSTM whose output and recurrent state ``r_t = W_hr h_t`` have ``projection_size`` units;
    states ``[r, c]``."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 h2r_weight_initializer=None, i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size, self._projection_size = hidden_size, input_size, projection_size
        rows = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, projection_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        shape, proj = self.i2h_weight.shape, self.h2r_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> {proj[0]})"

    def infer_shape(self, inputs, *args):
        self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[-1])

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        rows = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows, name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=rows,
                               name=prefix + "h2h")
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(gates[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"), name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size, weight=h2r_weight, no_bias=True,
                                  name=prefix + "out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC", valid_length=None):
    """Run ``cell`` over ``inputs`` with ``F.contrib.foreach``; with ``valid_length`` a sample's states stop
    at its last valid step and its outputs past it are zero. Returns ``(outputs, states)``."""
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    axes = None
    if axis != 0:  # foreach iterates over axis 0
        axes = list(range(len(layout)))
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(step, states):
            return cell(step, states)
    else:
        states = list(_as_list(states)) + [F.zeros(1)]

        def loop_body(step, states):
            cell_states, iter_no = states[:-1], states[-1]
            out, new_states = cell(step, cell_states)
            keep_new = F.broadcast_greater(valid_length, iter_no)
            new_states = [F.where(keep_new, new, old) for new, old in zip(new_states, cell_states, strict=False)]
            return out, new_states + [iter_no + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axes is not None:
        outputs = F.transpose(outputs, axes=axes)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis)
    return outputs, states[:-1]
