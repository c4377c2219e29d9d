"""dist_async: every worker pushes rank+1 NREPEAT times; after a barrier each pull is 1 + rate*NREPEAT*n(n+1)/2."""

from __future__ import annotations

import numpy as np
from dist_helpers import RATE, TestOptimizer

import mxasync as mx
from mxasync import kvstore

SHAPE, BIG_SHAPE = (2, 3), (1200, 1200)  # the big key is cut across the servers
NREPEAT = 3


def main() -> None:
    check_plain()  # first: the servers' optimizer (set below) serves every store of the job
    kv = kvstore.create("dist_async")
    kv.init(3, mx.nd.ones(SHAPE))
    kv.init(99, mx.nd.ones(BIG_SHAPE))
    kv.set_optimizer(TestOptimizer(rescale_grad=RATE))
    n, rank = kv.num_workers, kv.rank
    for _ in range(NREPEAT):
        kv.push(3, mx.nd.ones(SHAPE) * (rank + 1))
        kv.push(99, mx.nd.ones(BIG_SHAPE) * (rank + 1))
    # a worker sees its own pushes at once...
    own = mx.nd.zeros(SHAPE)
    kv.pull(3, out=own)
    assert own.asnumpy().min() >= 1 + RATE * NREPEAT * (rank + 1), own.asnumpy()
    kv.barrier()  # ...and everyone's after a barrier
    expected = 1 + RATE * NREPEAT * n * (n + 1) / 2
    for key, shape in ((3, SHAPE), (99, BIG_SHAPE)):
        out = mx.nd.zeros(shape)
        kv.pull(key, out=out)
        np.testing.assert_allclose(out.asnumpy(), expected)
    kv.barrier()
    print(f"worker {rank}/{n}: dist_async formula ok", flush=True)


def check_plain() -> None:
    """No optimizer: a push replaces the servers' value.  Each worker owns one key here, so the
    values are exact; pushes are sent from the pushed array and pulls land in ``out`` directly."""
    kv = kvstore.create("dist_async")
    rank, n = kv.rank, kv.num_workers
    keys = [f"plain{r}" for r in range(n)]
    kv.init(keys, [mx.nd.zeros((1000,)) for _ in keys])
    mine = keys[rank]
    for i in range(3):
        grad = mx.nd.ones((1000,)) * (rank + 1) * (i + 1)
        kv.push(mine, grad)
        grad += 100  # ordered after the push's send: the servers get the value as pushed
        out = mx.nd.zeros((1000,))
        kv.pull(mine, out=out)  # a worker sees its own push at once
        out += 1000  # a later write to out stays local
        np.testing.assert_allclose(out.asnumpy(), (rank + 1) * (i + 1) + 1000)
    a, b = mx.nd.zeros((1000,)), mx.nd.zeros((1000,))
    kv.push(mine, [mx.nd.ones((1000,)) * (rank + 1)] * 2)  # a list is summed first
    kv.pull(mine, out=[a, b])
    np.testing.assert_allclose(a.asnumpy(), 2 * (rank + 1))
    np.testing.assert_allclose(b.asnumpy(), 2 * (rank + 1))
    kv.barrier()
    for r, key in enumerate(keys):
        out = mx.nd.zeros((1000,))
        kv.pull(key, out=out)
        np.testing.assert_allclose(out.asnumpy(), 2 * (r + 1))
    kv.barrier()


if __name__ == "__main__":
    main()
