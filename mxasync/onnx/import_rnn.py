"""ONNX ``LSTM``/``GRU``/``RNN`` to the fused ``RNN`` op (one layer, one or two directions).

``W``, ``R`` and ``B`` must be constants: they are packed into MXNet's flat parameter vector
with the gates put back in MXNet's order (the inverse of :mod:`mxasync.operator.nn.onnx_rnn`).
"""

from __future__ import annotations

import numpy as np

from ._symbols import S

__all__ = ["recurrent"]

# ONNX gate i comes from MXNet gate _ONNX_FROM_MX[mode][i]; inverted below
_ONNX_FROM_MX = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn": [0]}


def _mx_gates(a: np.ndarray, mode: str, h: int) -> np.ndarray:
    order = np.argsort(_ONNX_FROM_MX[mode])
    parts = a.reshape((len(order), h) + a.shape[1:])
    return np.concatenate([parts[i] for i in order], axis=0)


def recurrent(imp, node, attrs):
    kind = {"LSTM": "lstm", "GRU": "gru", "RNN": "rnn"}[node.op_type]
    h = int(attrs["hidden_size"])
    direction = attrs.get("direction", "forward")
    if direction == "reverse":
        raise imp.fail(node, "direction='reverse' is not supported")
    if attrs.get("layout", 0) != 0 or "clip" in attrs or attrs.get("input_forget", 0):
        raise imp.fail(node, "layout=1, clip and input_forget are not supported")
    if len(node.input) > 4 and node.input[4]:
        raise imp.fail(node, "sequence_lens is not supported")
    if len(node.input) > 7 and node.input[7]:
        raise imp.fail(node, "peepholes (P) are not supported")
    mode = kind
    if kind == "gru" and not attrs.get("linear_before_reset", 0):
        raise imp.fail(node, "GRU with linear_before_reset=0 is not supported (MXNet's GRU resets after R h)")
    acts = [a.decode() if isinstance(a, bytes) else a for a in attrs.get("activations", [])]
    if kind == "rnn":
        mode = "rnn_relu" if acts and acts[0] == "Relu" else "rnn_tanh"
        if acts and any(a not in ("Relu", "Tanh") for a in acts):
            raise imp.fail(node, f"activations {acts} are not supported")
    elif acts and acts not in (["Sigmoid", "Tanh", "Tanh"] * 2, ["Sigmoid", "Tanh", "Tanh"],
                               ["Sigmoid", "Tanh"] * 2, ["Sigmoid", "Tanh"]):
        raise imp.fail(node, f"activations {acts} are not supported")
    w, r = imp.const(node.input[1]), imp.const(node.input[2])
    if w is None or r is None:
        raise imp.fail(node, "W and R must be constants")
    d = w.shape[0]
    g = w.shape[1] // h
    b = imp.const(node.input[3]) if len(node.input) > 3 and node.input[3] else np.zeros((d, 2 * g * h), w.dtype)
    if b is None:
        raise imp.fail(node, "B must be a constant")
    weights, biases = [], []
    for k in range(d):
        weights += [_mx_gates(w[k], kind, h).reshape(-1), _mx_gates(r[k], kind, h).reshape(-1)]
        biases += [_mx_gates(b[k][:g * h], kind, h), _mx_gates(b[k][g * h:], kind, h)]
    flat = np.concatenate(weights + biases).astype(w.dtype)
    name = imp.unique(node.name) or imp.unique(f"{node.op_type.lower()}")
    params = imp.param(f"{name}_parameters", flat)

    def state(i):
        if len(node.input) > i and node.input[i]:
            return imp.sym(node.input[i])
        return S._zeros(shape=(d, 0, h), dtype=w.dtype.name)

    states = [state(5)] + ([state(6)] if kind == "lstm" else [])
    out = S.RNN(imp.sym(node.input[0]), params, *states, state_size=h, num_layers=1,
                bidirectional=d == 2, mode=mode, state_outputs=True, name=name)
    y = S.transpose(S.Reshape(out[0], shape=(0, 0, d, h)), axes=(0, 2, 1, 3))
    return [y] + [out[i] for i in range(1, 3 if kind == "lstm" else 2)]
