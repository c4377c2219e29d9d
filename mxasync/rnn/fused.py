"""``FusedRNNCell``: a whole stack of recurrent layers as one fused ``RNN`` op over one flat parameter vector;
``unpack_weights``/``pack_weights`` convert to the per-gate names of the stepping cells, ``unfuse()`` gives
the equivalent stack of them."""

from __future__ import annotations

from .. import initializer as init
from .. import ndarray, symbol
from .rnn_cell import BaseRNNCell, GRUCell, LSTMCell, RNNCell, _normalize_sequence

__all__ = ["FusedRNNCell"]


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

    def unfuse(self):
        """The same network as a stack of stepping cells (weights named as unpack_weights names them)."""
        from .stack import BidirectionalCell, DropoutCell, SequentialRNNCell  # they build on this module

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
