"""Convolutional recurrent cells (Shi et al., 2015): the i2h and h2h products of RNN/LSTM/GRU cells
as convolutions over a feature map; ``Conv{1,2,3}D{RNN,LSTM,GRU}Cell``.

``input_shape`` is one sample's shape without the batch axis (``(C, W)`` for ``NCW``); the state
keeps the i2h convolution's output size, and the h2h kernel (odd sizes only) is padded to keep it.

>>> import mxasync as mx
>>> cell = Conv2DLSTMCell((3, 8, 8), 4, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
>>> cell.initialize()
>>> out, states = cell.unroll(2, mx.nd.ones((1, 2, 3, 8, 8)), merge_outputs=True)
>>> out.shape, states[1].shape
((1, 2, 4, 8, 8), (1, 4, 8, 8))
"""

from __future__ import annotations

from ....base import numeric_types
from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = [f"Conv{d}D{k}Cell" for d in (1, 2, 3) for k in ("RNN", "LSTM", "GRU")]


def _tuple(spec, dims, what):
    if isinstance(spec, numeric_types):
        return (int(spec),) * dims
    spec = tuple(spec)
    if len(spec) != dims:
        raise AssertionError(f"For {dims}D convolution, the convolution settings can only be either int or "
                             f"list/tuple of length {dims}; {what}={spec}")
    return spec


class _ConvCell(HybridRecurrentCell):
    _gates = 1
    _n_states = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 dims, conv_layout, activation, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels, self._input_shape = hidden_channels, tuple(input_shape)
        self._conv_layout, self._activation = conv_layout, activation
        self._i2h_kernel = _tuple(i2h_kernel, dims, "i2h_kernel")
        self._i2h_pad = _tuple(i2h_pad, dims, "i2h_pad")
        self._i2h_dilate = _tuple(i2h_dilate, dims, "i2h_dilate")
        self._h2h_kernel = _tuple(h2h_kernel, dims, "h2h_kernel")
        self._h2h_dilate = _tuple(h2h_dilate, dims, "h2h_dilate")
        self._stride = (1,) * dims
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise AssertionError(f"Only support odd number, get h2h_kernel= {h2h_kernel}")
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel, strict=False))
        self._channel_axis = conv_layout.find("C")
        channels_first = self._channel_axis == 1
        in_channels = self._input_shape[self._channel_axis - 1]
        spatial = self._input_shape[1:] if channels_first else self._input_shape[:-1]
        out_size = tuple(x + 2 * p - d * (k - 1) if x else 0
                         for x, k, p, d in zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate, strict=False))
        rows = hidden_channels * self._gates
        if channels_first:
            i2h_shape = (rows, in_channels) + self._i2h_kernel
            h2h_shape = (rows, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_size
        else:
            i2h_shape = (rows,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (rows,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_size + (hidden_channels,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape, init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape, init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._n_states)]

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({in_channels if in_channels else None} -> {shape[0]}, {self._activation}, "
                f"{self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        rows = self._hidden_channels * self._gates
        i2h = F.Convolution(data=inputs, num_filter=rows, kernel=self._i2h_kernel, stride=self._stride,
                            pad=self._i2h_pad, dilate=self._i2h_dilate, weight=i2h_weight, bias=i2h_bias,
                            layout=self._conv_layout, name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=rows, kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                            pad=self._h2h_pad, stride=self._stride, weight=h2h_weight, bias=h2h_bias,
                            layout=self._conv_layout, name=prefix + "h2h")
        return i2h, h2h


class _ConvRNNCell(_ConvCell):
    def _alias(self) -> str:
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_ConvCell):
    _gates = 4
    _n_states = 2

    def _alias(self) -> str:
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice", axis=self._channel_axis)
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation), name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_ConvCell):
    _gates = 3

    def _alias(self) -> str:
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice", axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice", axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        candidate = self._get_activation(F, i2h + reset_gate * h2h, self._activation, name=prefix + "h_act")
        next_h = F.elemwise_add((1.0 - update_gate) * candidate, update_gate * states[0], name=prefix + "out")
        return next_h, [next_h]


_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _make(base, dims, kind):
    ones, zeros = (1,) * dims, (0,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=zeros, i2h_dilate=ones,
                 h2h_dilate=ones, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", conv_layout=_LAYOUTS[dims],
                 activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                      i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                      dims, conv_layout, activation, prefix, params)

    name = f"Conv{dims}D{kind}Cell"
    doc = (f"{dims}-D convolutional {kind} cell (layout {_LAYOUTS[dims]} or channels last); "
           "``input_shape`` excludes the batch axis.")
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _make(_ConvRNNCell, 1, "RNN")
Conv2DRNNCell = _make(_ConvRNNCell, 2, "RNN")
Conv3DRNNCell = _make(_ConvRNNCell, 3, "RNN")
Conv1DLSTMCell = _make(_ConvLSTMCell, 1, "LSTM")
Conv2DLSTMCell = _make(_ConvLSTMCell, 2, "LSTM")
Conv3DLSTMCell = _make(_ConvLSTMCell, 3, "LSTM")
Conv1DGRUCell = _make(_ConvGRUCell, 1, "GRU")
Conv2DGRUCell = _make(_ConvGRUCell, 2, "GRU")
Conv3DGRUCell = _make(_ConvGRUCell, 3, "GRU")
