"""dist_device_sync with GPU arrays: ``nccl_sync.py DEVICE EXPECT`` (DEVICE: 'rank' = gpu(rank) or
'zero' = gpu(0) on every rank; EXPECT: 'nccl' or 'host', the path the workers must agree on, or
'stall': worker 1 stops after announcing a push, so worker 0's NCCL kernel waits for it)."""

from __future__ import annotations

import logging
import sys

import numpy as np
from dist_helpers import RATE, TestOptimizer

import mxasync as mx
from mxasync import kvstore

SHAPE, BIG_SHAPE = (2, 3), (1200, 1200)


def main(device: str, expect: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    kv = kvstore.create("dist_device_sync")
    n, rank = kv.num_workers, kv.rank
    ctx = mx.gpu(rank if device == "rank" else 0)
    # init: worker 0's value wins (a broadcast on the GPU)
    kv.init(3, mx.nd.ones(SHAPE, ctx=ctx) * (1 if rank == 0 else 7))
    kv.init(99, mx.nd.ones(BIG_SHAPE, ctx=ctx))
    kv.init("h", mx.nd.zeros((1000,), ctx=ctx, dtype="float16"))
    kv.init("s", mx.nd.zeros((10,), ctx=ctx, dtype="int16"))  # a dtype NCCL lacks: staged through the host
    kv.set_optimizer(TestOptimizer(rescale_grad=RATE))
    for i in range(3):
        kv.push(3, mx.nd.ones(SHAPE, ctx=ctx) * (rank + 1))
        kv.push(99, [mx.nd.ones(BIG_SHAPE, ctx=ctx) * (rank + 1) / 2] * 2)  # two values: summed locally first
        expected = 1 + RATE * n * (n + 1) / 2 * (i + 1)
        for key, shape in ((3, SHAPE), (99, BIG_SHAPE)):
            out = mx.nd.zeros(shape, ctx=ctx)
            kv.pull(key, out=out)
            np.testing.assert_allclose(out.asnumpy(), expected)
    plain = kvstore.create("dist_device_sync")  # no optimizer: the sum lands in the stored value
    plain.init("p", mx.nd.zeros((4096,), ctx=ctx))
    plain.init("h", mx.nd.zeros((1000,), ctx=ctx, dtype="float16"))
    plain.init("s", mx.nd.zeros((10,), ctx=ctx, dtype="int16"))
    total = n * (n + 1) // 2
    for i in range(3):
        grad = (mx.nd.ones((4096,), ctx=ctx) * (rank + 1)) * (i + 1)  # made by GPU kernels just before the push
        out = mx.nd.zeros((4096,), ctx=ctx)
        kv_push_pull(plain, "p", grad, out)
        np.testing.assert_allclose(out.asnumpy(), total * (i + 1))
        np.testing.assert_allclose(grad.asnumpy(), (rank + 1) * (i + 1))  # the push left its value alone
        for key, dtype in (("h", "float16"), ("s", "int16")):
            g = mx.nd.ones((1000 if key == "h" else 10,), ctx=ctx, dtype=dtype) * (rank + 1)
            o = mx.nd.zeros(g.shape, ctx=ctx, dtype=dtype)
            kv_push_pull(plain, key, g, o)
            np.testing.assert_allclose(o.asnumpy().astype(np.float64), total)
    kv.barrier()
    comms = kv._comm.nccl_state.comms
    got = "nccl" if comms.get(0) is not None else "host"
    assert got == expect, f"worker {rank}: expected the {expect} path, took {got}"
    print(f"worker {rank}/{n}: nccl_sync ok ({got})", flush=True)


def stall() -> None:
    """Worker 1 sends its header for the push, then never launches its kernel: worker 0's
    watch must abort NCCL and end the job after MXASYNC_KVSTORE_TIMEOUT instead of hanging."""
    import time

    from mxasync.kvstore.dist import nccl

    kv = kvstore.create("dist_device_sync")
    rank = kv.rank
    ctx = mx.gpu(rank)
    kv.init("w", mx.nd.zeros((1024,), ctx=ctx))
    kv.barrier()
    if rank == 1:
        nccl.GpuCollective._nccl = lambda *args: time.sleep(600)
    out = mx.nd.zeros((1024,), ctx=ctx)
    kv.push("w", mx.nd.ones((1024,), ctx=ctx))
    kv.pull("w", out=out)
    out.asnumpy()  # waits on the kernel's event
    print(f"worker {rank}: the stalled push returned", flush=True)


def kv_push_pull(kv, key, grad, out) -> None:
    kv.push(key, grad)
    kv.pull(key, out=out)


if __name__ == "__main__":
    if sys.argv[2] == "stall":
        stall()
    else:
        main(sys.argv[1], sys.argv[2])
