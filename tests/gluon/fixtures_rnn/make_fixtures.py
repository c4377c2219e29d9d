"""Record gluon.rnn layers in MXNet 1.9.1 for ``tests/gluon/test_rnn_layers.py``. By hand only:

    $MXASYNC_MXNET_PYTHON tests/gluon/fixtures_rnn/make_fixtures.py

Each layer is initialised by MXNet, saved with ``save_parameters`` (``<name>.params``, MXNet's keys), and
run on a fixed input under autograd: the outputs, the final states and the input gradient go to
``rnn_layers.npz``.
"""

from __future__ import annotations

from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
mx.random.seed(5)
rng = np.random.default_rng(5)
store = {}
LAYERS = {
    "lstm_bi2": lambda: mx.gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3),
    "gru_ntc": lambda: mx.gluon.rnn.GRU(5, layout="NTC", input_size=3),
    "rnn_tanh": lambda: mx.gluon.rnn.RNN(4, activation="tanh", input_size=3),
}
for name, make in LAYERS.items():
    layer = make()
    layer.initialize(mx.init.Uniform(0.5))
    layer.save_parameters(str(HERE / f"{name}.params"))
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3, 3) if name == "gru_ntc" else (3, 2, 3)).astype(np.float32))
    x.attach_grad()
    batch = x.shape[0] if name == "gru_ntc" else x.shape[1]
    states = layer.begin_state(batch_size=batch)
    with mx.autograd.record():
        out, new_states = layer(x, states)
        loss = (out * out).sum() + sum((s * s).sum() for s in new_states)
    loss.backward()
    store[f"{name}/x"] = x.asnumpy()
    store[f"{name}/out"] = out.asnumpy()
    for i, s in enumerate(new_states):
        store[f"{name}/state{i}"] = s.asnumpy()
    store[f"{name}/xgrad"] = x.grad.asnumpy()
np.savez_compressed(HERE / "rnn_layers.npz", **store)
print(sorted(mx.nd.load(str(HERE / "lstm_bi2.params")))[:4])
