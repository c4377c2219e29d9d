"""KVStore ops awaited from asyncio: the event loop keeps running while MPI works."""

from __future__ import annotations

import asyncio

import numpy as np

import mxasync as mx
from mxasync import kvstore


async def main() -> None:
    kv = kvstore.create("dist_sync")
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
    task.cancel()
    np.testing.assert_allclose(await out.asnumpy_async(), kv.num_workers * (kv.num_workers + 1) / 2)
    assert ticks > 0, "the event loop was blocked"
    print(f"worker {kv.rank}: async api ok, {ticks} ticks", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
