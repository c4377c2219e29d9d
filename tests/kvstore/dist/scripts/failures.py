"""Failure modes of a 2-worker dist_sync job; argv[1] picks one.

kill:    worker 1 kills itself in round 3 (mpirun must end the job and name it)
stall:   worker 1 stops itself (SIGSTOP) in round 3: no sign of life, so worker 0 must raise
         MXNetError after the timeout
unequal: worker 1 runs 3 batches, worker 0 runs 5 (both must say so)
skipped: worker 1's gradient fails in round 2 (both must fail that push, then go on)

argv[2] == 'sparse': the key is row_sparse, pushed as row_sparse gradients and pulled with
row_sparse_pull (the same header checks and liveness must hold).
"""

from __future__ import annotations

import os
import signal
import sys

import mxasync as mx
from mxasync import kvstore


def _fail(rctx) -> None:
    raise ValueError("this gradient failed")


def main(mode: str, sparse: bool = False) -> None:
    kv = kvstore.create("dist_sync")
    kv.init("w", mx.nd.zeros((1000, 1)).tostype("row_sparse") if sparse else mx.nd.zeros((1000,)))
    rank = kv.rank
    batches = 3 if (mode == "unequal" and rank == 1) else 5
    out = mx.nd.sparse.zeros("row_sparse", (1000, 1)) if sparse else mx.nd.zeros((1000,))
    for i in range(batches):
        grad = mx.nd.ones((1000, 1)).tostype("row_sparse") if sparse else mx.nd.ones((1000,))
        if rank == 1 and i == 2:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "stall":
                os.kill(os.getpid(), signal.SIGSTOP)
            if mode == "skipped":
                mx.engine.get().push_sync(_fail, mx.cpu(), [], [grad._chunk.var], name="failing_op")
        kv.push("w", grad)
        if sparse:
            kv.row_sparse_pull("w", out=out, row_ids=mx.nd.arange(0, 1000, dtype="int64"))
        else:
            kv.pull("w", out=out)
        try:
            out.wait_to_read()
        except mx.MXNetError as exc:
            if mode != "skipped":
                raise
            print(f"worker {rank}: round {i} failed: {exc}", flush=True)
            continue
        print(f"worker {rank}: round {i} ok {out.asnumpy().ravel()[0]}", flush=True)
    print(f"worker {rank}: done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sparse=sys.argv[2:] == ["sparse"])
