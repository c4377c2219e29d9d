"""MXNet 1.x's symbolic RNN cells (``mx.rnn``): build unrolled recurrent graphs out of Symbols.

A cell maps ``(inputs, states)`` of one time step to ``(output, new_states)``; ``unroll``
repeats it over a sequence. Weights are Variables named ``<prefix>i2h_weight``, ... and
are shared between steps (and between cells given the same ``params``). ``FusedRNNCell``
runs the whole stack as one ``RNN`` op; ``unfuse()`` gives the equivalent stack of cells.

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

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


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


class RNNCell(BaseRNNCell):
    """A simple recurrent cell: ``h' = act(W_i2h x + b_i2h + W_h2h h + b_h2h)``."""

    def __init__(self, num_hidden: int, activation="tanh", prefix: str = "rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW, self._iB = self.params.get("i2h_weight"), self.params.get("i2h_bias")
        self._hW, self._hB = self.params.get("h2h_weight"), self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

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


class GRUCell(BaseRNNCell):
    """Gated recurrent unit, cuDNN's form: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW, self._iB = self.params.get("i2h_weight"), self.params.get("i2h_bias")
        self._hW, self._hB = self.params.get("h2h_weight"), self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

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


class FusedRNNCell(BaseRNNCell):
    """The whole stack as one fused ``RNN`` op over one flat ``<prefix>parameters`` vector."""

    def __init__(self, num_hidden: int, num_layers: int = 1, mode: str = "lstm", bidirectional: bool = False,
                 dropout: float = 0.0, get_next_state: bool = False, forget_bias: float = 1.0,
                 prefix: str | None = None, params=None):
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden, self._num_layers, self._mode = num_hidden, num_layers, mode
        self._bidirectional, self._dropout, self._get_next_state = bidirectional, dropout, get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        self._parameter = self.params.get(
            "parameters", init=init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias))

    @property
    def state_info(self):
        count = 2 if self._mode == "lstm" else 1
        return [{"shape": (len(self._directions) * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(count)]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    def _slice_weights(self, arr, num_input: int, h: int) -> dict:
        """Views of the flat vector by gate: all weights (per layer, direction, gate), then all biases."""
        args, pos, dirs = {}, 0, len(self._directions)
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group, cols in (("i2h", num_input if layer == 0 else dirs * h), ("h2h", h)):
                    for gate in self._gate_names:
                        args[f"{self._prefix}{direction}{layer}_{group}{gate}_weight"] = \
                            arr[pos:pos + h * cols].reshape((h, cols))
                        pos += h * cols
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group in ("i2h", "h2h"):
                    for gate in self._gate_names:
                        args[f"{self._prefix}{direction}{layer}_{group}{gate}_bias"] = arr[pos:pos + h]
                        pos += h
        if pos != arr.size:
            raise ValueError(f"FusedRNNCell: a parameter vector of {arr.size} values does not fit {self._mode} "
                             f"with {self._num_layers} layer(s) of {h} units")
        return args

    def _num_input(self, size: int) -> int:
        dirs, gates, h = len(self._directions), len(self._gate_names), self._num_hidden
        return size // dirs // h // gates - (self._num_layers - 1) * (h + dirs * h + 2) - h - 2

    def unpack_weights(self, args: dict) -> dict:
        args = dict(args)
        arr = args.pop(self._parameter.name)
        pieces = self._slice_weights(arr, self._num_input(arr.size), self._num_hidden)
        args.update({name: piece.copy() for name, piece in pieces.items()})
        return args

    def pack_weights(self, args: dict) -> dict:
        args = dict(args)
        h, gates, dirs = self._num_hidden, len(self._gate_names), len(self._directions)
        first = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = first.shape[1]
        total = (num_input + h + 2) * h * gates * dirs + (self._num_layers - 1) * gates * h * (h + dirs * h + 2) * dirs
        arr = ndarray.zeros((total,), ctx=first.context, dtype=first.dtype)
        for name, piece in self._slice_weights(arr, num_input, h).items():
            piece[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped; use unroll (or unfuse())")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)  # the fused op is time-major
        elif axis != 0:
            raise ValueError(f"FusedRNNCell: unsupported layout {layout!r}")
        states = self.begin_state() if begin_state is None else begin_state
        named = {"state": states[0]}
        if self._mode == "lstm":
            named["state_cell"] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode, name=self._prefix + "rnn", **named)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            states = [rnn[1], rnn[2]] if self._mode == "lstm" else [rnn[1]]
            for state in states:
                state._set_attr(__layout__="LNC")
            outputs = rnn[0]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self) -> SequentialRNNCell:
        """The same network as a stack of stepping cells (weights named as unpack_weights names them)."""
        make = {"rnn_relu": lambda p: RNNCell(self._num_hidden, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(self._num_hidden, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(self._num_hidden, prefix=p),
                "gru": lambda p: GRUCell(self._num_hidden, prefix=p)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"), make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


class SequentialRNNCell(BaseRNNCell):
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


class BidirectionalCell(BaseRNNCell):
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

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("a BidirectionalCell cannot be stepped; use unroll")

    @property
    def state_info(self):
        return [info for c in self._cells for info in c.state_info]

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return [s for c in self._cells for s in c.begin_state(**kwargs)]

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

