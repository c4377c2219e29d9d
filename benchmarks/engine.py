"""Engine benchmarks; prints one JSON object.

    python benchmarks/engine.py [--quick]

* ``tiny_op_us``: push-and-complete cost of a tiny op through the sync wrapper,
  with the engine deciding where it runs (``auto``) and with an ``inline`` hint,
  next to calling the same function directly and to a thread hop.
* ``chain_vs_independent``: 1000 dependent tiny ops against 1000 independent ones.
* ``two_matmuls``: two independent GIL-releasing matmuls through the engine,
  against the same two run one after the other (raw numpy, and engine-serialised).
* ``inline_crossover``: per-op time of numpy adds of growing size run inline in
  the pushing thread vs on the worker pool: where the engine's line should fall.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from _timing import best  # noqa: E402 - benchmarks/ is on sys.path when run as a script

import mxasync as mx  # noqa: E402

CPU = mx.cpu()


def tiny_ops(eng, n):
    a, b, c = eng.new_variable(), eng.new_variable(), eng.new_variable()
    x, y, z = np.ones(4, np.float32), np.ones(4, np.float32), np.empty(4, np.float32)

    def add(rctx):
        np.add(x, y, out=z)

    def run(hint):
        def go():
            for _ in range(n):
                eng.push_sync(add, CPU, [a, b], [c], name="tiny_add", inline=hint)
            eng.wait_for_all()
        return go

    run(None)()  # let the engine learn the op's cost
    out = {
        "auto": best(run(None)) / n * 1e6,
        "inline_hint": best(run(True)) / n * 1e6,
        "direct_call_of_fn": best(lambda: [add(None) for _ in range(n)]) / n * 1e6,
    }
    hop = []

    def hop_once():
        ev = threading.Event()
        t0 = time.perf_counter()
        threading.Thread(target=ev.set).start()
        ev.wait()
        hop.append(time.perf_counter() - t0)

    for _ in range(200):
        hop_once()
    out["thread_hop_for_reference"] = float(np.median(hop)) * 1e6
    pool_n = max(n // 20, 500)

    def pool():
        for _ in range(pool_n):
            eng.push_sync(add, CPU, [a, b], [c], name="tiny_add_pool", inline=False)
        eng.wait_for_all()

    out["forced_pool"] = best(pool, 3) / pool_n * 1e6
    return out


def chain_vs_independent(eng, n=1000):
    x = np.ones(4, np.float32)

    def op(rctx):
        np.add(x, 1, out=x)

    v = eng.new_variable()
    others = [eng.new_variable() for _ in range(n)]

    def chain():
        for _ in range(n):
            eng.push_sync(op, CPU, [], [v], name="chain_op")
        eng.wait_for_all()

    def independent():
        for w in others:
            eng.push_sync(op, CPU, [], [w], name="chain_op")
        eng.wait_for_all()

    chain()
    return {"dependent_chain_ms": best(chain) * 1e3, "independent_ms": best(independent) * 1e3, "ops": n}


def two_matmuls(eng, size):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    c, d = np.empty_like(a), np.empty_like(a)
    raw_default_blas = best(lambda: (np.matmul(a, b, out=c), np.matmul(b, a, out=d)), 3)
    v1, v2 = eng.new_variable(), eng.new_variable()

    def mm1(rctx):
        np.matmul(a, b, out=c)

    def mm2(rctx):
        np.matmul(b, a, out=d)

    def parallel():
        eng.push_sync(mm1, CPU, [], [v1], name="mm")
        eng.push_sync(mm2, CPU, [], [v2], name="mm")
        eng.wait_for_all()

    def serial():
        eng.push_sync(mm1, CPU, [], [v1], name="mm")
        eng.push_sync(mm2, CPU, [], [v1], name="mm")  # same var: one after the other
        eng.wait_for_all()

    parallel()  # starts the pool (which sets one BLAS thread per worker)
    par = best(parallel, 5)
    ser = best(serial, 5)
    raw_same_blas = best(lambda: (np.matmul(a, b, out=c), np.matmul(b, a, out=d)), 3)
    return {
        "size": size,
        "engine_parallel_ms": par * 1e3,
        "engine_serial_ms": ser * 1e3,
        "numpy_sequential_default_blas_threads_ms": raw_default_blas * 1e3,
        "numpy_sequential_1_blas_thread_ms": raw_same_blas * 1e3,
        "speedup_vs_serial": ser / par,
        "speedup_vs_numpy_default_blas": raw_default_blas / par,
    }


def inline_crossover(eng, sizes, count=200):
    rows = []
    for n in sizes:
        xs = [np.ones(n, np.float32) for _ in range(4)]
        vars_ = [eng.new_variable() for _ in range(4)]

        def make(i, xs=xs):
            x = xs[i]

            def op(rctx):
                np.multiply(x, 1.0001, out=x)

            return op

        ops = [make(i) for i in range(4)]

        def run(hint, ops=ops, vars_=vars_):
            def go():
                for k in range(count):
                    eng.push_sync(ops[k % 4], CPU, [], [vars_[k % 4]], name="scale", inline=hint)
                eng.wait_for_all()
            return go

        inline = best(run(True), 3) / count * 1e6
        pool = best(run(False), 3) / count * 1e6
        rows.append({"elements": n, "inline_us_per_op": inline, "pool_us_per_op": pool,
                     "faster": "inline" if inline <= pool else "pool"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    eng = mx.engine.get()
    n = 20000 if args.quick else 200000
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
        "engine": eng.type,
        "workers": eng.num_workers,
        "two_matmuls": two_matmuls(eng, 512 if args.quick else 1536),
        "tiny_op_us": tiny_ops(eng, n),
        "chain_vs_independent": chain_vs_independent(eng),
        "inline_crossover": inline_crossover(eng, [10, 1000, 10_000, 30_000, 100_000, 1_000_000]
                                             if not args.quick else [10, 100_000]),
        "inline_threshold_us": eng._placement.inline_threshold * 1e6,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
