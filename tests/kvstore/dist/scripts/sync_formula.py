"""MXNet's nightly dist_sync_kvstore.py check: each worker pushes rank+1; the i-th pull is 1 + rate*n(n+1)/2*(i+1)."""

from __future__ import annotations

import time

import numpy as np
from dist_helpers import RATE, TestOptimizer

import mxasync as mx
from mxasync import kvstore
from mxasync.runtime.engine import Engine

SHAPE, BIG_SHAPE = (2, 3), (1200, 1200)


def main() -> None:
    kv = kvstore.create("dist_sync")
    kv.init(3, mx.nd.ones(SHAPE))
    kv.init(99, mx.nd.ones(BIG_SHAPE))
    kv.set_optimizer(TestOptimizer(rescale_grad=RATE))
    n, rank = kv.num_workers, kv.rank
    for i in range(3):
        kv.push(3, mx.nd.ones(SHAPE) * (rank + 1))
        kv.push(99, mx.nd.ones(BIG_SHAPE) * (rank + 1))
        expected = 1 + RATE * n * (n + 1) / 2 * (i + 1)
        for key, shape in ((3, SHAPE), (99, BIG_SHAPE)):
            out = mx.nd.zeros(shape)
            kv.pull(key, out=out)
            np.testing.assert_allclose(out.asnumpy(), expected)
    kv.barrier()
    check_plain_sums(n, rank)
    print(f"worker {rank}/{n}: dist_sync formula ok", flush=True)


def check_plain_sums(n: int, rank: int) -> None:
    """No optimizer: a pull right after a push is filled by the comm thread; the store keeps its own copy."""
    kv = kvstore.create("dist_sync")
    kv.init(5, mx.nd.zeros((1000,)))
    total = n * (n + 1) / 2
    for i in range(3):
        grad = mx.nd.ones((1000,)) * (rank + 1) * (i + 1)
        out, other = mx.nd.zeros((1000,)), mx.nd.zeros((1000,))
        kv.push(5, grad)
        kv.pull(5, out=[out, other])
        out += 100  # a later write to out must not reach the stored value
        again = mx.nd.zeros((1000,))
        kv.pull(5, out=again)
        np.testing.assert_allclose(out.asnumpy(), total * (i + 1) + 100)
        np.testing.assert_allclose(other.asnumpy(), total * (i + 1))
        np.testing.assert_allclose(again.asnumpy(), total * (i + 1))
        np.testing.assert_allclose(grad.asnumpy(), (rank + 1) * (i + 1))  # a push leaves its value alone
    grad = mx.nd.ones((1000,)) * (rank + 1)
    kv.pushpull(5, grad)
    np.testing.assert_allclose(grad.asnumpy(), total)
    check_pull_into_pushed(kv, n, rank, total)


def _slowly_written(value: float):
    """An array whose writer is still running, so the ops pushed after it wait (deterministic fusion)."""
    arr = mx.nd.zeros((1000,))
    data = arr._data

    def write(rctx):
        time.sleep(0.05)
        data[...] = value

    Engine.get().push_sync(write, arr.context, [], [arr._chunk.var], name="slow_write")
    return arr


def check_pull_into_pushed(kv, n: int, rank: int, total: float) -> None:
    """pushpull(key, grad): the comm thread sums in grad itself and copies it into the store,
    unless another op reads grad in between (then that reader must still see the pushed value)."""
    if Engine.get().type == "NaiveEngine":
        return  # every op finishes at its push: no pull ever meets a pending push
    for i in range(2):
        grad = _slowly_written((rank + 1) * (i + 1))
        kv.push(5, grad)
        task, _ = kv._fusable[5]
        kv.pull(5, out=grad)
        assert task._in_place, "a pull into the pushed array should sum in place"
        again = mx.nd.zeros((1000,))
        kv.pull(5, out=again)
        np.testing.assert_allclose(grad.asnumpy(), total * (i + 1))
        np.testing.assert_allclose(again.asnumpy(), total * (i + 1))  # the store got the sum too
    grad = _slowly_written(rank + 1)
    kv.push(5, grad)
    task, _ = kv._fusable[5]
    before = grad + 0  # another reader of grad, pending with the push
    kv.pull(5, out=grad)
    assert not task._in_place, "a pull must not sum in place while another op reads the pushed array"
    np.testing.assert_allclose(before.asnumpy(), rank + 1)
    np.testing.assert_allclose(grad.asnumpy(), total)


if __name__ == "__main__":
    main()
