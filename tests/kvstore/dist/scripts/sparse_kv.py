"""row_sparse keys on a distributed store (argv[1]: dist_sync, dist_device_sync or dist_async), checked against numpy.

* init: worker 0's rows win; ``row_sparse_pull`` returns just the asked rows, different on each rank;
* push without an optimizer: the stored value becomes the row_sparse sum of the workers' pushes;
* push with SGD (momentum, wd): the lazy update touches only the union of the pushed rows;
* a dense ``pull`` of a row_sparse key, a dense key pushed between sparse ones and a dense key that
  takes row_sparse pushes still work;
* a worker whose key has another storage type fails the init on every worker (argv[2] == 'disagree').
"""

from __future__ import annotations

import sys

import numpy as np

import mxasync as mx
from mxasync import kvstore

ROWS, COLS = 10, 3


def rsp(rows, value, shape=(ROWS, COLS)):
    rows = np.asarray(rows, np.int64)
    data = np.full((len(rows), *shape[1:]), value, np.float32) + rows[:, None]
    return mx.nd.sparse.row_sparse_array((data, rows), shape=shape)


def pulled(kv, key, row_ids) -> np.ndarray:
    out = mx.nd.sparse.zeros("row_sparse", (ROWS, COLS))
    kv.row_sparse_pull(key, out=out, row_ids=mx.nd.array(row_ids, dtype="int64"))
    assert out.stype == "row_sparse", out.stype
    assert sorted(out.indices.asnumpy().tolist()) == sorted(set(row_ids)), (out.indices.asnumpy(), row_ids)
    return out.asnumpy()


def grads(rank: int):
    """Worker r pushes rows {r, 4, 7 + r}: the union over 2 workers is {0, 1, 4, 7, 8} (row 4 from both)."""
    rows = [rank, 4, 7 + rank]
    return rows, rsp(rows, rank + 1.0)


def expected_sum(n: int) -> np.ndarray:
    total = np.zeros((ROWS, COLS), np.float32)
    for r in range(n):
        rows, g = grads(r)
        total += g.asnumpy()
    return total


def main(store: str) -> None:
    kv = kvstore.create(store)
    n, rank = kv.num_workers, kv.rank
    # init: worker 0's value wins (every row stored, so each pull sees it)
    w0 = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    mine = w0 + 1000 * rank
    kv.init("e", mx.nd.array(mine).tostype("row_sparse"))
    kv.init("d", mx.nd.zeros((4,)))
    kv.init("s", mx.nd.sparse.zeros("row_sparse", (ROWS, COLS)))
    kv.init("m", mx.nd.zeros((ROWS, COLS)))  # a dense key that takes row_sparse pushes
    asked = [1, 3] if rank == 0 else [9, 2, 2]  # different rows per rank (unsorted, repeated)
    got = pulled(kv, "e", asked)
    want = np.zeros_like(w0)
    want[asked] = w0[asked]
    np.testing.assert_allclose(got, want)

    # no optimizer: dist_sync replaces the stored value with the workers' row_sparse sum, dist_async
    # with each push as it arrives (after a barrier: the last one)
    sync = store != "dist_async"
    for i in range(2):
        rows, g = grads(rank)
        kv.push("s", g * (i + 1))
        kv.push("m", g * (i + 1))
        kv.push("d", mx.nd.ones((4,)))
        if not sync:
            kv.barrier()
        choices = [expected_sum(n)] if sync else [grads(r)[1].asnumpy() for r in range(n)]
        got = pulled(kv, "s", list(range(ROWS)))
        assert any(np.allclose(got, c * (i + 1)) for c in choices), got
        dense = mx.nd.zeros((ROWS, COLS))
        kv.pull("s", out=dense)
        np.testing.assert_allclose(dense.asnumpy(), got)
        kv.pull("m", out=dense)
        assert any(np.allclose(dense.asnumpy(), c * (i + 1)) for c in choices), dense.asnumpy()
        kv.barrier()
    d = mx.nd.zeros((4,))
    kv.pull("d", out=d)
    np.testing.assert_allclose(d.asnumpy(), n if sync else 1)

    # SGD on 'e' (dist_sync: momentum and wd; dist_async, where pushes apply in any order: neither):
    # lazy, so rows no worker pushed keep their value
    momentum, wd = (0.9, 0.01) if sync else (0.0, 0.0)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=wd, rescale_grad=0.5))
    weight, mom = w0.copy(), np.zeros_like(w0)
    for _ in range(3):
        rows, g = grads(rank)
        kv.push("e", g)
        total = expected_sum(n)
        union = sorted({r for k in range(n) for r in grads(k)[0]})
        for r in union:
            step = total[r] * 0.5 + wd * weight[r]
            mom[r] = momentum * mom[r] - 0.1 * step
            weight[r] += mom[r]
    kv.barrier()  # dist_async: every worker's pushes reached the servers
    got = pulled(kv, "e", list(range(ROWS)))
    np.testing.assert_allclose(got, weight, rtol=1e-5, atol=1e-5)
    untouched = [r for r in range(ROWS) if r not in union]
    np.testing.assert_array_equal(got[untouched], w0[untouched])
    print(f"worker {rank}/{n}: {store} row_sparse ok", flush=True)


def disagree(store: str) -> None:
    kv = kvstore.create(store)
    value = mx.nd.zeros((4, 2))
    kv.init("w", value if kv.rank == 0 else value.tostype("row_sparse"))
    try:
        out = mx.nd.zeros((4, 2))
        kv.pull("w", out=out)
        out.asnumpy()
        print(f"worker {kv.rank}: pulled", flush=True)
    except mx.MXNetError as exc:
        print(f"worker {kv.rank}: failed: {exc}", flush=True)
        sys.exit(3)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "disagree":
        disagree(sys.argv[1])
    else:
        main(sys.argv[1])
