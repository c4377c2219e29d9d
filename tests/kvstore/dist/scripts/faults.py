"""Fault-injection jobs of the distributed store (tests/kvstore/dist/test_dist.py, marked ``fault``).

argv[1] picks one; MXASYNC_KVSTORE_TIMEOUT is short in the tests (T seconds):

epilogue:        dist_sync; after training worker 0 alone "evaluates" for 2.5 T, then writes the
                 checkpoint argv[2]: worker 1 waits at the exit handshake and the job ends well
epilogue-stop:   the same, but worker 0 stops (SIGSTOP) in its epilogue: worker 1 must end the job
                 with an error naming worker 0
slow-async:      dist_async; worker 1 is slowed by T/4 per batch and finishes 3 T after worker 0,
                 which waits at exit and the job ends well
disagree:        argv[2] store; worker 0 inits 'w' as float32 (4,), worker 1 as int32 (2, 2)
late-start:      worker 1 reaches kv.create 10 T late; worker 0 awaits create_async in an event
                 loop that must keep ticking, and must get the start-up error after T
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import mxasync as mx
from mxasync import kvstore

T = float(os.environ.get("MXASYNC_KVSTORE_TIMEOUT", "3"))


def train(kv, batches: int = 3, pause: float = 0.0) -> None:
    kv.init("w", mx.nd.zeros((100,)))
    out = mx.nd.zeros((100,))
    for _ in range(batches):
        if pause:
            time.sleep(pause)
        kv.push("w", mx.nd.ones((100,)))
        kv.pull("w", out=out)
        out.wait_to_read()


def epilogue(stop: bool, path: str) -> None:
    kv = kvstore.create("dist_sync")
    train(kv)
    print(f"worker {kv.rank}: trained", flush=True)
    if kv.rank == 0:
        if stop:
            os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(2.5 * T)  # evaluate and save on rank 0 only, longer than the timeout
        with open(path, "w") as f:
            f.write("saved")
        print("worker 0: saved", flush=True)


def slow_async() -> None:
    kv = kvstore.create("dist_async")
    slow = kv.rank == 1
    train(kv, batches=12 if slow else 2, pause=T / 4 if slow else 0.0)
    print(f"worker {kv.rank}: done", flush=True)


def disagree(store: str) -> None:
    kv = kvstore.create(store)
    value = mx.nd.ones((4,), dtype="float32") if kv.rank == 0 else mx.nd.ones((2, 2), dtype="int32")
    kv.init("w", value)
    out = mx.nd.zeros(value.shape, dtype=value.dtype)
    try:
        kv.push("w", value)
        kv.pull("w", out=out)
        out.wait_to_read()
    except mx.MXNetError as exc:
        print(f"worker {kv.rank}: failed: {exc}", flush=True)
        sys.exit(1)
    print(f"worker {kv.rank}: pulled {out.asnumpy().ravel().tolist()}", flush=True)


async def late_start() -> None:
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    if rank == 1:
        time.sleep(10 * T)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    t0 = time.monotonic()
    try:
        await kvstore.create_async("dist_sync")
    except mx.MXNetError as exc:
        waited = time.monotonic() - t0
        task.cancel()
        # ticks: the loop ran while MPI waited (at 100 a second it would be ~100 T)
        print(f"worker {rank}: start-up failed after {waited:.0f} s, {ticks} ticks: {exc}", flush=True)
        try:
            kvstore.create("dist_sync")  # MPI_Init is still running in its thread: no second start
        except mx.MXNetError as again:
            print(f"worker {rank}: again: {again}", flush=True)
        sys.exit(1)
    print(f"worker {rank}: started", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode in ("epilogue", "epilogue-stop"):
        epilogue(mode == "epilogue-stop", sys.argv[2])
    elif mode == "slow-async":
        slow_async()
    elif mode == "disagree":
        disagree(sys.argv[2])
    elif mode == "late-start":
        asyncio.run(late_start())
