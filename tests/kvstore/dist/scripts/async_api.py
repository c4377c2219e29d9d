"""KVStore ops awaited from asyncio: the event loop keeps running while MPI works."""

from __future__ import annotations

import asyncio
import time

import numpy as np

import mxasync as mx
from mxasync import kvstore


async def main() -> None:
    kv = await kvstore.create_async("dist_sync")  # MPI starts in a thread: the loop runs on
    kv.init("w", mx.nd.zeros((1 << 18,)))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    out = mx.nd.zeros((1 << 18,))
    for _ in range(20):
        kv.push("w", mx.nd.ones((1 << 18,)) * (kv.rank + 1))
        kv.pull("w", out=out)
        await out  # NDArrays are awaitable: this coroutine waits, the loop does not
    np.testing.assert_allclose(await out.asnumpy_async(), kv.num_workers * (kv.num_workers + 1) / 2)
    assert ticks > 0, "the event loop was blocked"
    # a barrier awaited while worker 1 is late: worker 0's loop keeps ticking meanwhile
    if kv.rank == 1:
        time.sleep(0.3)
    before, t0 = ticks, time.monotonic()
    await kv.barrier_async()
    if kv.rank == 0:
        assert time.monotonic() - t0 > 0.2, "the barrier did not wait for worker 1"
        assert ticks - before >= 20, f"the event loop was blocked during barrier_async ({ticks - before} ticks)"
    task.cancel()
    print(f"worker {kv.rank}: async api ok, {ticks} ticks", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
