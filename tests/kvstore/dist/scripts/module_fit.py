"""Module.fit on dist_sync with 2 workers equals 1 worker on the concatenated batches.

``python module_fit.py single OUT.npz`` trains one process on global batches of
2*BATCH; ``mxasync launch -n 2 module_fit.py dist OUT.npz`` trains two workers,
worker r taking the r-th half of every global batch.  Both save the final weights.
"""

from __future__ import annotations

import sys

import numpy as np

import mxasync as mx
from mxasync import kvstore, module

BATCH, NUM_BATCHES, DIM, CLASSES = 8, 6, 10, 3


def network():
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=CLASSES, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def dataset(parts: int):
    """Every global batch is the concatenation of the parts' batches (part r = worker r)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(NUM_BATCHES, parts, BATCH, DIM)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=(NUM_BATCHES, parts, BATCH)).astype(np.float32)
    return x, y


def initial_params() -> dict:
    rng = np.random.default_rng(1)
    shapes = {"fc1_weight": (16, DIM), "fc1_bias": (16,), "fc2_weight": (CLASSES, 16), "fc2_bias": (CLASSES,)}
    return {k: mx.nd.array(rng.normal(scale=0.3, size=s).astype(np.float32)) for k, s in shapes.items()}


def main(mode: str, out: str) -> None:
    x, y = dataset(2)
    if mode == "dist":
        kv = kvstore.create("dist_sync")
        rank = kv.rank
        data, label = x[:, rank].reshape(-1, DIM), y[:, rank].reshape(-1)
        batch = BATCH
    else:
        kv, rank = "local", 0
        data, label = x.reshape(-1, DIM), y.reshape(-1)
        batch = 2 * BATCH
    it = mx.io.NDArrayIter(data, label, batch_size=batch, shuffle=False)
    mod = module.Module(network(), context=mx.cpu())
    mod.fit(it, num_epoch=2, kvstore=kv, optimizer="sgd", arg_params=initial_params(),
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.001})
    args, _ = mod.get_params()
    if rank == 0:
        np.savez(out, **{k: v.asnumpy() for k, v in args.items()})
    print(f"{mode} worker {rank}: trained", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
