"""Record MXNet 1.9.1's fused ``RNN`` with ``projection_size`` (LSTMP) for tests/operator/test_rnn_projection.py.
MXNet 1.9.1 runs LSTMP on CPU in inference only (no gradients), so only forward values are stored. By hand:

    /work/venvs/mx191/bin/python tests/operator/fixtures_lstmp/make_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}


def size(inputs, hidden, proj, layers, dirs):
    return sum(dirs * (4 * hidden * ((inputs if i == 0 else dirs * proj) + proj) + 8 * hidden + proj * hidden)
               for i in range(layers))


for layers, bidir in ((1, False), (2, True), (3, False)):
    dirs = 2 if bidir else 1
    T, N, In, H, P = 4, 3, 5, 6, 3
    ins = [rng.standard_normal((T, N, In)), rng.standard_normal(size(In, H, P, layers, dirs)) * 0.4,
           rng.standard_normal((layers * dirs, N, P)) * 0.5, rng.standard_normal((layers * dirs, N, H)) * 0.5]
    ins = [x.astype(np.float32) for x in ins]
    params = dict(state_size=H, projection_size=P, num_layers=layers, bidirectional=bidir, mode="lstm",
                  state_outputs=True)
    outs = mx.nd.RNN(*[mx.nd.array(x) for x in ins], **params)
    case = f"lstmp_{layers}{'_bi' if bidir else ''}"
    for i, x in enumerate(ins):
        store[f"{case}/in{i}"] = x
    for i, o in enumerate(outs):
        store[f"{case}/out{i}"] = o.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(params))

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"wrote {len(store)} arrays to {HERE / 'mxnet_ref.npz'}")
