"""Gluon's recurrent cells (MXNet 1.9's ``gluon.rnn.RNNCell``, ``LSTMCell``, ``GRUCell``, the stacks).

A cell computes one time step, ``output, states = cell(x_t, states)``; ``unroll`` runs it over a
sequence given as one array (``layout`` 'NTC' or 'TNC') or a list of steps, on NDArrays or Symbols,
optionally with per-sample ``valid_length`` (outputs past it are zero, the states are the last valid
ones). Parameter names and graph node names follow MXNet (``rnn_i2h_weight``, ``rnn_t0_out_output``), so
the weights of a fused ``gluon.rnn.LSTM`` layer load into a stack of cells and back.

>>> import mxasync as mx
>>> cell = mx.gluon.rnn.LSTMCell(4, input_size=3)
>>> cell.initialize()
>>> out, states = cell.unroll(5, mx.nd.ones((2, 5, 3)), layout='NTC', merge_outputs=True)
>>> out.shape, [s.shape for s in states]
((2, 5, 4), [(2, 4), (2, 4)])
"""

from __future__ import annotations

from ... import ndarray, symbol
from ...base import _as_list
from ..block import Block, HybridBlock
from ..nn.activations import LeakyReLU
from ..parameter import tensor_types

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell"]


def _cells_state_info(cells, batch_size):
    return sum((c.state_info(batch_size) for c in cells), [])


def _cells_begin_state(cells, **kwargs):
    return sum((c.begin_state(**kwargs) for c in cells), [])


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = inputs.context if isinstance(inputs, tensor_types) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` (one array/symbol or a list of steps) as a list of steps (``merge=False``), one array
    with time on ``layout``'s T axis (``merge=True``) or as they are (None); also the T axis, the
    namespace (``mx.nd`` or ``mx.sym``) and the batch size (0 for symbols)."""
    if inputs is None:
        raise AssertionError("unroll(inputs=None) has been deprecated. Please create input variables outside "
                             "unroll.")
    axis, batch_axis = layout.find("T"), layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise AssertionError("unroll doesn't allow grouped symbol as input. Please convert to list with "
                                     "list(inputs) first or let unroll handle splitting.")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if length is not None and length != inputs.shape[in_axis]:
                raise AssertionError(f"unroll: length {length} but the inputs have {inputs.shape[in_axis]} steps")
            inputs = _as_list(ndarray.split(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis],
                                            squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise AssertionError(f"unroll: length {length} but {len(inputs)} inputs")
        F = symbol if isinstance(inputs[0], symbol.Symbol) else ndarray
        if F is ndarray:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, tensor_types) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    if not isinstance(data, tensor_types):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = _steps(F, F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def _steps(F, split):
    """The outputs of a ``split`` as a list (a grouped symbol yields one symbol per output)."""
    return list(split) if F is symbol else _as_list(split)


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    F = symbol if isinstance(sequences[0], symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length, use_sequence_length=True)
    if unroll_step > 1 or F is symbol:
        return _steps(F, F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))
    return [rev[0]]


class RecurrentCell(Block):
    """The base of recurrent cells: ``state_info``, ``begin_state``, ``unroll``; one step per call."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset the step counters before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state."""
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states, each ``func(name=..., shape=..., **kwargs)``."""
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info, **kwargs) if info is not None else dict(kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        """Run the cell over ``length`` steps; returns ``(outputs, states)``."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*steps, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0) for steps in zip(*all_states, strict=False)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid, "softsign": F.softsign}.get(activation) \
            if isinstance(activation, str) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is a ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """The i2h/h2h parameters shared by the three cells (``gates`` blocks of ``hidden_size`` rows)."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size = hidden_size, input_size
        rows = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, hidden_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _n_states(self):
        return 1

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"} for _ in range(self._n_states())]

    def infer_shape(self, inputs, *args):
        self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[-1])

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{type(self).__name__}({mapping})"

    def _projections(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows, name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=rows,
                               name=prefix + "h2h")
        return i2h, h2h


class RNNCell(_GatedCell):
    """Elman cell: ``h_t = activation(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)``."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self) -> str:
        return "rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + "plus0"), self._activation,
                                      name=prefix + "out")
        return output, [output]


class _ActivatedGatedCell(_GatedCell):
    """LSTM and GRU: the gated cells with MXNet's ``activation`` / ``recurrent_activation`` choices."""

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None,
                 activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation, self._recurrent_activation = activation, recurrent_activation


class LSTMCell(_ActivatedGatedCell):
    """Long short-term memory cell (gates in the order input, forget, cell, output); states ``[h, c]``."""

    _gates = 4

    def _alias(self) -> str:
        return "lstm"

    def _n_states(self):
        return 2

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        parts = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, parts[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, parts[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, parts[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, parts[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"), name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act, name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_ActivatedGatedCell):
    """Gated recurrent unit (cuDNN's form: the reset gate scales ``W_hn h + b_hn``)."""

    _gates = 3

    def _alias(self) -> str:
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        prev_h = states[0]
        i2h, h2h = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = self._get_activation(F, F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                          self._recurrent_activation, name=prefix + "r_act")
        update_gate = self._get_activation(F, F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                           self._recurrent_activation, name=prefix + "z_act")
        candidate = self._get_activation(F, F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h,
                                                                              name=prefix + "mul0"),
                                                           name=prefix + "plus2"),
                                         self._activation, name=prefix + "h_act")
        keep = F.elemwise_sub(F.ones_like(update_gate), update_gate, name=prefix + "minus0")
        next_h = F.elemwise_add(F.elemwise_mul(keep, candidate, name=prefix + "mul1"),
                                F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"), name=prefix + "out")
        return next_h, [next_h]


class _StackMixin:
    """What the two sequential stacks share: adding cells, their states, unrolling layer by layer."""

    def add(self, cell) -> None:
        """Append a cell to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def __repr__(self) -> str:
        body = "\n".join(f"({i}): {m!r}".replace("\n", "\n  ") for i, m in self._children.items())
        return f"{type(self).__name__}(\n  {body}\n)"

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        cells = list(self._children.values())
        p, next_states = 0, []
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            states, p = begin_state[p:p + n], p + n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < len(cells) - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def _step(self, inputs, states):
        p, next_states = 0, []
        for cell in self._children.values():
            if getattr(cell, "_unrolled_only", False):
                raise AssertionError("Bidirectional cells cannot be stepped; use unroll")
            n = len(cell.state_info())
            state, p = states[p:p + n], p + n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Cells stacked one on another; each step runs them in order."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __call__(self, inputs, states):
        self._counter += 1
        return self._step(inputs, states)


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """Hybrid cells stacked one on another (usable inside a ``HybridBlock``)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __call__(self, inputs, states):
        self._counter += 1
        return self._step(inputs, states)

    def hybrid_forward(self, F, inputs, states):
        return self._step(inputs, states)
