"""ONNX converter of the fused ``RNN`` op: one ONNX ``LSTM``/``GRU``/``RNN`` node per layer.

MXNet's flat parameter vector (cuDNN's layout, see :mod:`.rnn`) is cut into ONNX's ``W``, ``R``
and ``B`` per layer at export time, with the gates reordered (LSTM: MXNet i, f, g, o -> ONNX
i, o, f, c; GRU: r, z, n -> z, r, h; MXNet's GRU applies the reset gate after the recurrent
product, ONNX's ``linear_before_reset=1``). The vector must therefore be constant at export
(a parameter, or built from parameters, as Gluon's layers do). Each layer's output
``(T, D, N, H)`` is laid out as MXNet's ``(T, N, D*H)``; zero initial states are left out
(ONNX's default), so the exported model takes any batch size.
"""

from __future__ import annotations

import numpy as np

from ..onnx_protocol import onnx_converter
from .rnn_stack import GATES, param_slices

_ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_relu": [0], "rnn_tanh": [0]}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_relu": "RNN", "rnn_tanh": "RNN"}


def _gates(a: np.ndarray, mode: str, h: int) -> np.ndarray:
    """Rows of a (G*H, ...) block (or a G*H vector) in ONNX's gate order."""
    g = GATES[mode]
    parts = a.reshape((g, h) + a.shape[1:])
    return np.concatenate([parts[i] for i in _ORDER[mode]], axis=0)


def _layer_weights(flat: np.ndarray, p, input_size: int):
    """Per layer: W (D, G*H, I), R (D, G*H, H), B (D, 2*G*H) in ONNX's order."""
    d = 2 if p.bidirectional else 1
    pieces = param_slices(p, input_size)
    h = p.state_size
    layers = []
    for layer in range(p.num_layers):
        ws, rs, bs = [], [], []
        for direction in range(d):
            (ox, sx), (oh, sh), (obx, sbx), (obh, sbh) = pieces[layer * d + direction]
            take = lambda off, shape: flat[off:off + int(np.prod(shape))].reshape(shape)  # noqa: E731
            ws.append(_gates(take(ox, sx), p.mode, h))
            rs.append(_gates(take(oh, sh), p.mode, h))
            bs.append(np.concatenate([_gates(take(obx, sbx), p.mode, h), _gates(take(obh, sbh), p.mode, h)]))
        layers.append((np.stack(ws), np.stack(rs), np.stack(bs)))
    return layers


def _initial(b, index: int, layer: int, d: int) -> str:
    """The layer's slice of an initial-state input, or '' (zeros, ONNX's default) when it is constant zero."""
    value = b.const_value(index)
    if value is not None and not value.any():
        return ""
    if value is not None:
        return b.const(np.ascontiguousarray(value[layer * d:(layer + 1) * d]), f"state{index}_l{layer}")
    starts, ends = b.const(np.array([layer * d], np.int64), "s"), b.const(np.array([(layer + 1) * d], np.int64), "e")
    return b.add("Slice", [b.inputs[index], starts, ends, b.const(np.array([0], np.int64), "axis0")])[0]


@onnx_converter("RNN")
def rnn(b) -> None:
    p = b.params
    if p.use_sequence_length or p.projection_size is not None or p.lstm_state_clip_min is not None \
            or p.lstm_state_clip_max is not None:
        raise b.fail("use_sequence_length, projection_size and LSTM state clipping cannot be exported")
    flat = b.const_value(1)
    if flat is None:
        raise b.fail("its parameters must be constant at export (parameters or ops on them)")
    d, h = (2 if p.bidirectional else 1), p.state_size
    direction = "bidirectional" if p.bidirectional else "forward"
    extra = {"linear_before_reset": 1} if p.mode == "gru" else {}
    if p.mode in ("rnn_relu", "rnn_tanh"):
        extra = {"activations": ["Relu" if p.mode == "rnn_relu" else "Tanh"] * d}
    x = b.inputs[0]
    hs, cs = [], []
    layers = _layer_weights(np.asarray(flat).reshape(-1), p, b.in_shape(0)[2])
    for layer, (w, r, bias) in enumerate(layers):
        last = layer == p.num_layers - 1
        ins = [x, b.const(w, f"W{layer}"), b.const(r, f"R{layer}"), b.const(bias, f"B{layer}"), "",
               _initial(b, 2, layer, d)]
        if p.mode == "lstm":
            ins.append(_initial(b, 3, layer, d))
        while ins[-1] == "":
            ins.pop()
        n_out = 3 if p.mode == "lstm" else 2
        y, *states = b.add(_ONNX_OP[p.mode], ins, n_out=n_out, hidden_size=h, direction=direction, **extra)
        hs.append(states[0])
        if p.mode == "lstm":
            cs.append(states[1])
        t = b.add("Transpose", [y], perm=[0, 2, 1, 3])[0]
        shape = b.const(np.array([0, 0, -1], np.int64), "seq_shape")
        x = b.add("Reshape", [t, shape], b.outputs[:1] if last else None)[0]
    if p.state_outputs:
        for states, out in ((hs, b.outputs[1]),) + (((cs, b.outputs[2]),) if p.mode == "lstm" else ()):
            if len(states) == 1:
                b.add("Identity", states, [out])
            else:
                b.add("Concat", states, [out], axis=0)
