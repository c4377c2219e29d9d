"""dist_async: every worker pushes rank+1 NREPEAT times; after a barrier each pull is 1 + rate*NREPEAT*n(n+1)/2."""

from __future__ import annotations

import numpy as np
from dist_helpers import RATE, TestOptimizer

import mxasync as mx
from mxasync import kvstore

SHAPE, BIG_SHAPE = (2, 3), (1200, 1200)  # the big key is cut across the servers
NREPEAT = 3


def main() -> None:
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


if __name__ == "__main__":
    main()
