"""Gluon's fused recurrent layers (``gluon.rnn.RNN``, ``LSTM``, ``GRU``) on the ``RNN`` op.

Parameters are per layer and direction, as MXNet 1.9 names them (``l0_i2h_weight``,
``r1_h2h_bias``, ...), and are concatenated in the op's flat layout on each call; the
input size is inferred on the first forward when ``input_size=0``.

>>> import mxasync as mx
>>> layer = mx.gluon.rnn.LSTM(8, num_layers=2, bidirectional=True, prefix="lstm0_")
>>> layer.initialize()
>>> out, (h, c) = layer(mx.nd.ones((5, 3, 4)), layer.begin_state(batch_size=3))
>>> out.shape, h.shape, sorted(layer.collect_params())[:2]
((5, 3, 16), (4, 3, 8), ['lstm0_l0_h2h_bias', 'lstm0_l0_h2h_weight'])
"""

from __future__ import annotations

from ... import ndarray, symbol
from ...ndarray import NDArray
from ..block import HybridBlock
from .rnn_cell import GRUCell, HybridSequentialRNNCell, LSTMCell, RNNCell
from .rnn_modifiers import BidirectionalCell, DropoutCell

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class _RNNLayer(HybridBlock):
    """The fused layer: ``layer(inputs, states=None)`` gives ``output`` (or ``(output, states)`` given states)."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, mode, projection_size=None,
                 h2r_weight_initializer=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
                 lstm_state_clip_nan=False, dtype="float32", use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        if use_sequence_length:
            raise NotImplementedError(f"{type(self).__name__}: use_sequence_length is not supported; pad the "
                                      "sequences or mask the outputs with SequenceMask")
        self._hidden_size, self._num_layers, self._mode = hidden_size, num_layers, mode
        self._layout, self._dropout, self._dir = layout, dropout, 2 if bidirectional else 1
        self._input_size, self._dtype = input_size, dtype
        self._projection_size = projection_size or None
        self._clip = (lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan)
        self._inits = (i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)
        self.skip_states = None
        gates, width = _GATES[mode], input_size
        fed_back = self._projection_size or hidden_size  # LSTMP feeds back and outputs the projection
        for layer in range(num_layers):
            for direction in ("l", "r")[:self._dir]:
                self._register_param(f"{direction}{layer}_i2h_weight", (gates * hidden_size, width),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{direction}{layer}_h2h_weight", (gates * hidden_size, fed_back),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{direction}{layer}_i2h_bias", (gates * hidden_size,), i2h_bias_initializer,
                                     dtype)
                self._register_param(f"{direction}{layer}_h2h_bias", (gates * hidden_size,), h2h_bias_initializer,
                                     dtype)
                if self._projection_size:
                    self._register_param(f"{direction}{layer}_h2r_weight", (fed_back, hidden_size),
                                         h2r_weight_initializer, dtype)
            width = fed_back * self._dir

    def _register_param(self, name, shape, init, dtype):
        param = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, param)
        return param

    def __repr__(self) -> str:
        shape = self.l0_i2h_weight.shape
        text = f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0] // _GATES[self._mode]}, " \
               f"{self._layout}"
        if self._num_layers != 1:
            text += f", num_layers={self._num_layers}"
        if self._dropout:
            text += f", dropout={self._dropout}"
        if self._dir == 2:
            text += ", bidirectional"
        return text + ")"

    def _unfuse(self):
        """The same layer as a stack of cells sharing this layer's parameters (MXNet's ``_unfuse``)."""
        if self._projection_size or self._clip[0] is not None or self._clip[1] is not None:
            raise NotImplementedError(f"{type(self).__name__}: _unfuse does not support projection or state "
                                      "clipping (as in MXNet 1.9.1)")
        kinds = {"rnn_relu": lambda **kw: RNNCell(self._hidden_size, activation="relu", **kw),
                 "rnn_tanh": lambda **kw: RNNCell(self._hidden_size, activation="tanh", **kw),
                 "lstm": lambda **kw: LSTMCell(self._hidden_size, **kw),
                 "gru": lambda **kw: GRUCell(self._hidden_size, **kw)}
        make = kinds[self._mode]
        i2h_w, h2h_w, i2h_b, h2h_b = self._inits
        stack = HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            width = self._input_size
            for i in range(self._num_layers):
                kw = {"input_size": width, "i2h_weight_initializer": i2h_w, "h2h_weight_initializer": h2h_w,
                      "i2h_bias_initializer": i2h_b, "h2h_bias_initializer": h2h_b}
                if self._dir == 2:
                    stack.add(BidirectionalCell(make(prefix=f"l{i}_", **kw), make(prefix=f"r{i}_", **kw)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(DropoutCell(self._dropout))
                width = self._hidden_size * self._dir
        return stack

    def _collect_params_with_prefix(self, prefix: str = "") -> dict:
        # save_parameters/load_parameters keys as MXNet 1.9 writes them for fused layers (the names of the
        # equivalent unfused cells), so .params files move between the two frameworks
        if prefix:
            prefix += "."
        bidirectional = self._dir == 2
        out = {}
        for key, param in self._reg_params.items():
            direction, layer, rest = key[0], key[1:].split("_", 1)[0], key.split("_", 1)[1]
            name = f"_unfused.{layer}.{direction}_cell.{rest}" if bidirectional else f"_unfused.{layer}.{rest}"
            out[prefix + name] = param
        for name, child in self._children.items():
            out.update(child._collect_params_with_prefix(prefix + name))
        return out

    def state_info(self, batch_size=0):
        cell = (self._num_layers * self._dir, batch_size, self._hidden_size)
        shape = (cell[0], batch_size, self._projection_size or self._hidden_size)
        shapes = [shape, cell] if self._mode == "lstm" else [shape]
        return [{"shape": s, "__layout__": "LNC", "dtype": self._dtype} for s in shapes]

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states: ``func(shape=..., **kwargs)`` for each (zeros by default)."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            args = dict(info, **kwargs)
            args.pop("__layout__", None) if func in (ndarray.zeros, ndarray.ones) else None
            states.append(func(name=f"{self.prefix}h0_{i}", **args))
        return states

    def infer_shape(self, inputs, *states):
        """The input size of the first layer comes from the data (``input_size=0``)."""
        width = inputs.shape[2]
        for direction in ("l", "r")[:self._dir]:
            param = getattr(self, f"{direction}0_i2h_weight")
            param.shape = (param.shape[0], width)

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def __call__(self, inputs, states=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, NDArray):
                batch = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, (NDArray, symbol.Symbol)):
            states = [states]
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F, inputs, states, **kwargs):
        if F is ndarray:
            batch = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch), strict=False):
                if state.shape != info["shape"]:
                    raise ValueError(f"Invalid recurrent state shape. Expecting {info['shape']}, got {state.shape}.")
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        # the op's flat layout: every weight (layer, direction, i2h, h2h then h2r), then every bias the same way
        kinds = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        flat = [kwargs[f"{d}{layer}_{g}_{t}"].reshape(-1) for t in ("weight", "bias")
                for layer in range(self._num_layers) for d in ("l", "r")[:self._dir] for g in kinds
                if g != "h2r" or t != "bias"]
        params = F._internal._rnn_param_concat(*flat, dim=0, num_args=len(flat))
        clip_min, clip_max, clip_nan = self._clip
        rnn = F.RNN(inputs, params, *states, state_size=self._hidden_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True, mode=self._mode,
                    projection_size=self._projection_size, lstm_state_clip_min=clip_min,
                    lstm_state_clip_max=clip_max, lstm_state_clip_nan=clip_nan)
        outputs, states = (rnn[0], [rnn[1], rnn[2]]) if self._mode == "lstm" else (rnn[0], [rnn[1]])
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs if self.skip_states else (outputs, states)


class RNN(_RNNLayer):
    """Elman RNN layers: ``h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)`` with ``activation`` relu or tanh."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "rnn_" + activation,
                         dtype=dtype, **kwargs)


class LSTM(_RNNLayer):
    """Long short-term memory layers (gates i, f, g, o); states are ``[h, c]``."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "lstm",
                         projection_size, h2r_weight_initializer, state_clip_min, state_clip_max, state_clip_nan,
                         dtype, **kwargs)


class GRU(_RNNLayer):
    """Gated recurrent unit layers (cuDNN's form: the reset gate applies after the recurrent product)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "gru", dtype=dtype,
                         **kwargs)
