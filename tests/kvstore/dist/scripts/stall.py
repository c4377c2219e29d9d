"""A 2-worker dist_sync job in which a worker is stopped (SIGSTOP) part-way; argv[1] picks how.

fit:        Module.fit for a long time; each worker prints its pid once training runs, and the
            test (or benchmarks/kvstore_stall.py) sends SIGSTOP to one of them from outside
collective: worker 1's communication thread (its only MPI caller) hangs right before the data of
            round 3 moves (every header already matched: worker 0 waits inside the collective);
            a hang rather than SIGSTOP, which something may undo (a stopped rank was seen resumed)

Either way the other worker must end the job within MXASYNC_KVSTORE_TIMEOUT plus a few seconds.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import mxasync as mx
from mxasync import kvstore, module
from mxasync.kvstore.dist import collective

DIM, HIDDEN, CLASSES, BATCH = 64, 256, 10, 32


def _stop_in_collective() -> None:
    execute = collective.Collective.execute

    def stalled(self, comm):
        if self.kind == collective.ALLREDUCE and self.round == 3:
            print("worker 1: its communication thread hangs", flush=True)
            time.sleep(3600)
        return execute(self, comm)

    collective.Collective.execute = stalled


def push_pull(kv) -> None:
    keys = ["a", "b", "c"]
    kv.init(keys, [mx.nd.zeros((50_000,)) for _ in keys])
    if kv.rank == 1:
        _stop_in_collective()
    outs = [mx.nd.zeros((50_000,)) for _ in keys]
    for i in range(1_000):
        kv.push(keys, [mx.nd.ones((50_000,)) for _ in keys])
        kv.pull(keys, out=outs)
        outs[0].wait_to_read()
        print(f"worker {kv.rank}: round {i}", flush=True)


def fit(kv) -> None:
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=HIDDEN, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=CLASSES, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    rng = np.random.default_rng(kv.rank)
    x = rng.normal(size=(8 * BATCH, DIM)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=8 * BATCH).astype(np.float32)
    it = mx.io.NDArrayIter(x, y, batch_size=BATCH)
    said = []

    def running(param) -> None:
        if not said:
            said.append(True)
            print(f"worker {kv.rank} pid {os.getpid()} fitting", flush=True)

    mod = module.Module(net, context=mx.cpu())
    mod.fit(it, num_epoch=100_000, kvstore=kv, optimizer="sgd", optimizer_params={"learning_rate": 0.01},
            batch_end_callback=running)


if __name__ == "__main__":
    store = kvstore.create("dist_sync")
    fit(store) if sys.argv[1] == "fit" else push_pull(store)
