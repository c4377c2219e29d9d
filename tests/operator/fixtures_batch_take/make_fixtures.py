"""Record batch_take's outputs from MXNet 1.9.1: run with /work/mxref/bin/python (writes batch_take.npz here)."""

import os

import mxnet as mx
import numpy as np

rng = np.random.default_rng(7)
store = {}
for i, (n, m) in enumerate([(4, 3), (6, 5)]):
    a = rng.standard_normal((n, m)).astype(np.float32)
    idx = rng.integers(-2, m + 3, size=n).astype(np.int32)  # out-of-range ones too: MXNet clips them
    store[f"case{i}/a"] = a
    store[f"case{i}/indices"] = idx
    store[f"case{i}/out"] = mx.nd.batch_take(mx.nd.array(a), mx.nd.array(idx, dtype="int32")).asnumpy()
np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_take.npz"), **store)
