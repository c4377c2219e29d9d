"""Cells made of cells (MXNet's mx.rnn): ``SequentialRNNCell`` (stacked), ``BidirectionalCell``, and the
modifiers ``DropoutCell``, ``ZoneoutCell``, ``ResidualCell``."""

from __future__ import annotations

from .. import symbol
from .fused import FusedRNNCell
from .rnn_cell import BaseRNNCell, _normalize_sequence

__all__ = ["SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


class _ChildCells:
    """States, begin states and weights of a cell made of ``self._cells``: theirs, in order."""

    @property
    def state_info(self):
        return [info for c in self._cells for info in c.state_info]

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return [s for c in self._cells for s in c.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_ChildCells, BaseRNNCell):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list[BaseRNNCell] = []

    def add(self, cell: BaseRNNCell) -> None:
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ValueError("give params to the SequentialRNNCell or to its cells, not both")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    def _split_states(self, states):
        pos = 0
        for cell in self._cells:
            n = len(cell.state_info)
            yield cell, states[pos:pos + n]
            pos += n

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in self._split_states(states):
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError("a BidirectionalCell cannot be stepped; use unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        states = self.begin_state() if begin_state is None else begin_state
        next_states = []
        last = len(self._cells) - 1
        for i, (cell, state) in enumerate(self._split_states(states)):
            inputs, state = cell.unroll(length, inputs=inputs, begin_state=state, layout=layout,
                                        merge_outputs=None if i < last else merge_outputs)
            next_states.extend(state)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input (between stacked cells)."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, (int, float)):
            raise TypeError(f"DropoutCell: dropout must be a number, got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell that wraps another and changes what it does (the wrapped cell is then used only through it)."""

    def __init__(self, base_cell: BaseRNNCell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        self._check_not_modified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): randomly keep the previous output and states instead of the new ones."""

    def __init__(self, base_cell, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise TypeError(f"ZoneoutCell cannot wrap a {type(base_cell).__name__}: it cannot be stepped")
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):  # 1 where the new value is kept (Dropout of ones: 0 or 1/(1-p))
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (symbol.where(keep_new(self.zoneout_outputs, next_output), next_output, prev)
                  if self.zoneout_outputs else next_output)
        if self.zoneout_states:
            next_states = [symbol.where(keep_new(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states, strict=True)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Output = the wrapped cell's output + its input (Wu et al. 2016)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge)
        if merge:
            return symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual"), states
        return [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, inputs, strict=True)], states


class BidirectionalCell(_ChildCells, BaseRNNCell):
    """One cell forward in time and one backward; their outputs concatenated along the feature axis."""

    def __init__(self, l_cell: BaseRNNCell, r_cell: BaseRNNCell, params=None, output_prefix: str = "bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        if params is not None:
            if not (l_cell._own_params and r_cell._own_params):
                raise ValueError("give params to the BidirectionalCell or to its cells, not both")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def __call__(self, inputs, states):
        raise NotImplementedError("a BidirectionalCell cannot be stepped; use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left], layout=layout,
                                        merge_outputs=merge_outputs)
        r_out, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)), begin_state=states[n_left:],
                                        layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_out, symbol.Symbol):
                    l_out = list(symbol.SliceChannel(l_out, axis=axis, num_outputs=length, squeeze_axis=1))
                if isinstance(r_out, symbol.Symbol):
                    r_out = list(symbol.SliceChannel(r_out, axis=axis, num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_out = [l_out]
            r_out = [symbol.reverse(r_out, axis=axis)]
        else:
            r_out = list(reversed(r_out))
        outputs = [symbol.Concat(lo, ro, dim=1 + merge_outputs, name=(f"{self._output_prefix}out" if merge_outputs
                                                                     else f"{self._output_prefix}t{i}"))
                   for i, (lo, ro) in enumerate(zip(l_out, r_out, strict=True))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, l_states + r_states
