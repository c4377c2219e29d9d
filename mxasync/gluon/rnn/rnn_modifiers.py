"""Cells that wrap other cells (MXNet 1.9's ``DropoutCell``, ``ZoneoutCell``, ``ResidualCell``,
``BidirectionalCell``, ``ModifierCell``).

>>> import mxasync as mx
>>> bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(3, input_size=2), mx.gluon.rnn.GRUCell(3, input_size=2))
>>> bi.initialize()
>>> out, states = bi.unroll(4, mx.nd.ones((1, 4, 2)), merge_outputs=True)
>>> out.shape, len(states)
((1, 4, 6), 2)
"""

from __future__ import annotations

from ... import symbol
from ...base import numeric_types
from ..parameter import tensor_types
from .rnn_cell import (
    HybridRecurrentCell,
    _cells_begin_state,
    _cells_state_info,
    _format_sequence,
    _get_begin_state,
    _mask_sequence_variable_length,
    _reverse_sequences,
)

__all__ = ["DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


class DropoutCell(HybridRecurrentCell):
    """Dropout on the input of each step (``axes``: the axes sharing one mask); no states."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, numeric_types):
            raise AssertionError("rate must be a number")
        self._rate, self._axes = rate, axes

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes, name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, tensor_types):  # one array: one dropout over the whole sequence
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs)


class ModifierCell(HybridRecurrentCell):
    """A cell that changes another (``base_cell``), which must then be used only through it."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise AssertionError(f"Cell {base_cell.name} is already modified. One cell cannot be modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout: each output and state element keeps its previous value with probability
    ``zoneout_outputs`` / ``zoneout_states`` while training."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if getattr(base_cell, "_unrolled_only", False):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't support step. Please "
                                 "add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):  # 1 where the new value is kept (Dropout of ones scales kept ones: nonzero)
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output if self._prev_output is not None else F.zeros_like(next_output)
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        output = F.where(keep_new(p_out, next_output), next_output, prev_output) if p_out != 0 else next_output
        if p_state != 0:
            next_states = [F.where(keep_new(p_state, new), new, old) for new, old in zip(next_states, states, strict=False)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the base cell's output (Wu et al., 2016)."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs, valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, tensor_types)
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:  # padded steps add zero
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs, strict=False)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates their outputs;
    it can only be unrolled."""

    _unrolled_only = True

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs, valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_left:],
                                            layout=layout, merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, tensor_types)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not isinstance(reversed_r_outputs, tensor_types):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (lo, ro) in enumerate(zip(l_outputs, reversed_r_outputs, strict=False))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
