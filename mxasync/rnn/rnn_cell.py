"""MXNet 1.x's symbolic RNN cells (``mx.rnn``): the base cell and the stepping cells RNN, LSTM and GRU.

A cell maps ``(inputs, states)`` of one time step to ``(output, new_states)``; ``unroll``
repeats it over a sequence. Weights are Variables named ``<prefix>i2h_weight``, ... and
are shared between steps (and between cells given the same ``params``). ``fused.py`` runs a
whole stack as one ``RNN`` op; ``stack.py`` combines cells (sequential, bidirectional, modifiers).

>>> import mxasync as mx
>>> cell = mx.rnn.LSTMCell(num_hidden=4, prefix="lstm_")
>>> outputs, states = cell.unroll(3, mx.sym.Variable("data"), layout="NTC", merge_outputs=True)
>>> outputs.infer_shape(data=(2, 3, 5))[1]
[(2, 3, 4)]
>>> sorted(outputs.list_arguments())
['data', 'lstm_h2h_bias', 'lstm_h2h_weight', 'lstm_i2h_bias', 'lstm_i2h_weight']
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import initializer as init
from .. import ndarray, symbol

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell"]


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Inputs as a list of per-step Symbols (merge False) or one Symbol with a time axis (merge True)."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) is not supported: create the input Variables outside unroll")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll: a grouped Symbol as input; pass list(inputs) instead")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: {len(inputs)} inputs for length={length}")
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The Variables of one or more cells, by name (cells given the same container share weights)."""

    def __init__(self, prefix: str = ""):
        self._prefix = prefix
        self._params: dict[str, symbol.Symbol] = {}

    def get(self, name: str, **kwargs) -> symbol.Symbol:
        """The Variable ``prefix + name``, created on first use (``kwargs`` go to ``Variable``)."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """A recurrent cell: ``cell(inputs, states) -> (output, states)`` for one step, ``unroll`` for many."""

    def __init__(self, prefix: str = "", params: RNNParams | None = None):
        self._own_params = params is None
        self._prefix = prefix
        self._params = RNNParams(prefix) if params is None else params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step and begin-state counters (names restart at t0) before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError

    @property
    def params(self) -> RNNParams:
        """The cell's Variables (asking for them means they may be shared)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list:
        raise NotImplementedError

    @property
    def state_shape(self) -> list:
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ()

    def _check_not_modified(self) -> None:
        if self._modified:
            raise RuntimeError("after a modifier cell (DropoutCell, ZoneoutCell, ResidualCell) wraps this cell, "
                               "call the modifier cell instead")

    def begin_state(self, func=symbol.zeros, **kwargs) -> list:
        """The states of the first step, made by ``func`` (``symbol.zeros`` or ``symbol.Variable``, ...)."""
        self._check_not_modified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            args = dict(kwargs, **(info or {}))
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **args))
        return states

    def unpack_weights(self, args: dict) -> dict:
        """Split the fused gate matrices of ``args`` into one per gate (``<prefix>i2h_i_weight``, ...)."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict) -> dict:
        """The inverse of :meth:`unpack_weights`."""
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weights = [args.pop(f"{self._prefix}{group}{gate}_weight") for gate in self._gate_names]
            biases = [args.pop(f"{self._prefix}{group}{gate}_bias") for gate in self._gate_names]
            args[f"{self._prefix}{group}_weight"] = ndarray.concatenate(weights)
            args[f"{self._prefix}{group}_bias"] = ndarray.concatenate(biases)
        return args

    def unroll(self, length: int, inputs, begin_state=None, layout: str = "NTC", merge_outputs=None):
        """Run the cell over ``length`` steps; outputs are a list (or one Symbol with merge_outputs=True)."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

    def _step_name(self) -> str:
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"


class _OneStateCell(BaseRNNCell):
    """A cell with one state (RNN, GRU): i2h and h2h products with biases, ``num_hidden`` units."""

    def _one_state_cell(self, num_hidden: int) -> None:
        self._num_hidden = num_hidden
        self._iW, self._iB = self.params.get("i2h_weight"), self.params.get("i2h_bias")
        self._hW, self._hB = self.params.get("h2h_weight"), self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]


class RNNCell(_OneStateCell):
    """A simple recurrent cell: ``h' = act(W_i2h x + b_i2h + W_h2h h + b_h2h)``."""

    def __init__(self, num_hidden: int, activation="tanh", prefix: str = "rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._activation = activation
        self._one_state_cell(num_hidden)

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden,
                                    name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=self._num_hidden,
                                    name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory (gates i, f, c, o; the forget gate's bias starts at ``forget_bias``)."""

    def __init__(self, num_hidden: int, prefix: str = "lstm_", params=None, forget_bias: float = 1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"},
                {"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        h = self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=h * 4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=h * 4,
                                    name=f"{name}h2h")
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"), name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(_OneStateCell):
    """Gated recurrent unit, cuDNN's form: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._one_state_cell(num_hidden)

    @property
    def _gate_names(self):
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        h, prev = self._num_hidden, states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=h * 3,
                                    name=f"{name}_i2h")
        h2h = symbol.FullyConnected(data=prev, weight=self._hW, bias=self._hB, num_hidden=h * 3, name=f"{name}_h2h")
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i_r + h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i_z + h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = symbol.Activation(i_n + reset * h_n, act_type="tanh", name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1.0 - update) * candidate, update * prev, name=f"{name}out")
        return next_h, [next_h]


_ELSEWHERE = {"FusedRNNCell": "fused", "SequentialRNNCell": "stack", "BidirectionalCell": "stack",
              "DropoutCell": "stack", "ModifierCell": "stack", "ZoneoutCell": "stack", "ResidualCell": "stack"}


def __getattr__(name: str):
    # MXNet keeps every cell in mxnet.rnn.rnn_cell; here the fused and composite cells have their own modules
    # (which build on this one), so those names resolve late
    if name not in _ELSEWHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__package__}.{_ELSEWHERE[name]}"), name)
