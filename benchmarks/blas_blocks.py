"""Who should split a big GEMM over the cores: OpenBLAS's own threads, or the engine's blocks? Prints JSON.

    python benchmarks/blas_blocks.py [--threads 2] [--rounds 5] [--json out.json]

For the GEMM shapes of ResNet-18's convolutions at 224x224, batch 8 (the shifted layout's batched
per-offset products, the per-sample columns' forward GEMMs, a weight gradient's long summed axis),
CPU and wall milliseconds per call, the median over ``--rounds`` rounds that alternate:

* ``openblas_threads``: one call on the engine's private OpenBLAS with its own pool at ``--threads``
  (how the engine ran a lone big GEMM before 2026-12-02);
* ``engine_blocks``: ``blas.matmul`` as it is now: the product cut into two blocks a thread, each a
  one-thread OpenBLAS call, run by the numpy backend's kernel threads (the load check is off, so the
  blocks are handed out as on an idle machine, whatever else runs);
* ``one_thread``: the whole product on the caller's thread.

CPU time is what the speed suite compares; wall time shows the two-thread modes still use both cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mxasync.backends.numpy import blas, parallel  # noqa: E402

# (batch, m, k, n): C (batch, m, n) = A (m, k) @ B (batch, k, n)
SHAPES = ((8, 64, 64, 3246), (8, 128, 128, 870), (8, 256, 256, 240), (1, 64, 576, 25088), (1, 128, 1152, 6272),
          (1, 256, 2304, 1568), (1, 512, 4608, 392), (1, 576, 64, 25088), (1, 64, 25088, 576))


def _operands(shape, rng):
    count, m, k, n = shape
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal(((count,) if count > 1 else ()) + (k, n), dtype=np.float32)
    return a, b, np.empty(((count,) if count > 1 else ()) + (m, n), np.float32)


def _mode(name: str, threads: int) -> None:
    if name == "openblas_threads":
        blas._threads = 1  # no blocks: the whole call to OpenBLAS, whose pool takes the threads
        blas._set_threads(threads)
    else:
        blas._threads = threads if name == "engine_blocks" else 1
        blas._set_threads(1)


def _per_call(fn, calls: int) -> tuple[float, float]:
    fn()
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.process_time() - c0) / calls * 1e3, (time.perf_counter() - w0) / calls * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if not blas.available():
        sys.exit("the engine's private BLAS (scipy-openblas32) is not installed")
    parallel.CHECK_LOAD = False
    modes = ("openblas_threads", "engine_blocks", "one_thread")
    rng = np.random.default_rng(0)
    data = [_operands(s, rng) for s in SHAPES]
    runs = {s: {m: [] for m in modes} for s in SHAPES}
    for _ in range(args.rounds):
        for shape, (a, b, c) in zip(SHAPES, data, strict=True):
            for mode in modes:
                _mode(mode, args.threads)
                runs[shape][mode].append(_per_call(lambda a=a, b=b, c=c: blas.matmul(a, b, out=c), args.calls))
    _mode("engine_blocks", args.threads)
    rows = []
    for shape in SHAPES:
        row = {"batch_m_k_n": list(shape)}
        for mode in modes:
            cpu, wall = (float(np.median([r[i] for r in runs[shape][mode]])) for i in (0, 1))
            row[mode] = {"cpu_ms": round(cpu, 2), "wall_ms": round(wall, 2)}
        row["cpu_blocks_vs_openblas_threads"] = round(row["engine_blocks"]["cpu_ms"] / row["openblas_threads"]["cpu_ms"], 2)
        rows.append(row)
    res = {"threads": args.threads, "rounds": args.rounds, "load_average_after": os.getloadavg(), "shapes": rows}
    text = json.dumps(res, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
