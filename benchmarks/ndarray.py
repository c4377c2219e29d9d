"""NDArray benchmarks; prints one JSON object.

    python benchmarks/ndarray.py [--quick]

* ``tiny_add``: ``c = a + b`` on 4-element float32 arrays, per op, against numpy;
* ``tiny_chain``: 1000 dependent ``a = a + b`` then one wait, against numpy;
* ``large_add``: the same on 1M-element arrays (the engine runs these on the pool);
* ``memory``: peak pooled bytes over 10k temporaries of 1 MiB (flat means a few MiB).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from _timing import best  # noqa: E402 - benchmarks/ is on sys.path when run as a script

import mxasync as mx  # noqa: E402
from mxasync.runtime.storage import Storage  # noqa: E402


def add_loop(n_elems, n_ops):
    a, b = mx.nd.ones((n_elems,)), mx.nd.ones((n_elems,))
    an, bn = np.ones(n_elems, np.float32), np.ones(n_elems, np.float32)

    def ours():
        for _ in range(n_ops):
            c = a + b  # noqa: F841
        mx.nd.waitall()

    def theirs():
        for _ in range(n_ops):
            c = an + bn  # noqa: F841

    ours()
    return {"elements": n_elems, "mxasync_us_per_op": best(ours) / n_ops * 1e6,
            "numpy_us_per_op": best(theirs) / n_ops * 1e6}


def chain(n_elems, n_ops=1000):
    b = mx.nd.ones((n_elems,))
    bn = np.ones(n_elems, np.float32)

    def ours():
        a = mx.nd.zeros((n_elems,))
        for _ in range(n_ops):
            a = a + b
        a.wait_to_read()

    def theirs():
        a = np.zeros(n_elems, np.float32)
        for _ in range(n_ops):
            a = a + bn

    ours()
    return {"elements": n_elems, "ops": n_ops, "mxasync_ms": best(ours, 3) * 1e3, "numpy_ms": best(theirs, 3) * 1e3}


def memory(n=10000):
    ctx = mx.cpu(3)
    st = Storage.get(ctx)
    x = mx.nd.ones((512, 512), ctx=ctx)
    peaks = []
    t0 = time.perf_counter()
    for i in range(n):
        y = x * 2
        del y
        if i % 1000 == 999:
            peaks.append(st.stats()["in_use"])
    mx.nd.waitall()
    gc.collect()
    stats = st.stats()
    return {"temporaries": n, "bytes_each": 512 * 512 * 4, "peak_in_use_bytes": stats["peak"],
            "pooled_bytes_after": stats["pooled"], "in_use_every_1000": peaks,
            "seconds": time.perf_counter() - t0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 20000 if args.quick else 200000
    result = {
        "tiny_add": add_loop(4, n),
        "tiny_chain": chain(4),
        "large_add": add_loop(1_000_000, 50 if args.quick else 300),
        "large_chain": chain(1_000_000, 100),
        "memory": memory(1000 if args.quick else 10000),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
