"""The engine's private BLAS against numpy's, one GEMM and two at once; prints JSON.

    python benchmarks/blas.py [--size 128x784x512] [--repeat 30]

For an ``m x k`` by ``k x n`` float32 GEMM, median microseconds of

* ``numpy_default``: ``np.matmul`` with numpy's own BLAS threads (the user's setting);
* ``numpy_1_thread``: the same under ``threadpool_limits(1)``;
* ``engine_blas``: ``mxasync.backends.numpy.blas.matmul`` (the engine's own OpenBLAS; a big call
  cut into blocks run on the cores nothing else wants, see ``benchmarks/blas_blocks.py``);
* ``*_two_threads``: two Python threads each running one such GEMM at the same time (what
  two engine workers do when two GEMMs are ready): numpy's shared pool against the engine's
  one-thread calls side by side.

``runnable_elsewhere`` is the kernel's count of other runnable threads when the run ended
(the engine hands no block to a kernel thread when it is above 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from mxasync.backends.numpy import blas, pressure  # noqa: E402


def median_us(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(float(np.median(times)) * 1e6, 1)


def two_at_once(mm, a, b, outs):
    def run():
        mm(a, b, outs[1])

    t = threading.Thread(target=run)
    t.start()
    mm(a, b, outs[0])
    t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="128x784x512", help="m x k x n")
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    m, k, n = (int(v) for v in args.size.split("x"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    outs = [np.empty((m, n), np.float32), np.empty((m, n), np.float32)]

    def numpy_mm(x, y, out):
        np.matmul(x, y, out=out)

    res = {"size": [m, k, n], "engine_blas_available": blas.available(), "engine_blas_threads": blas.threads()}
    res["numpy_default_us"] = median_us(lambda: numpy_mm(a, b, outs[0]), args.repeat)
    with threadpool_limits(1, user_api="blas"):
        res["numpy_1_thread_us"] = median_us(lambda: numpy_mm(a, b, outs[0]), args.repeat)
    res["engine_blas_us"] = median_us(lambda: blas.matmul(a, b, outs[0]), args.repeat)
    res["numpy_default_two_threads_us"] = median_us(lambda: two_at_once(numpy_mm, a, b, outs), args.repeat)
    res["engine_blas_two_threads_us"] = median_us(lambda: two_at_once(blas.matmul, a, b, outs), args.repeat)
    res["runnable_elsewhere"] = pressure.runnable_elsewhere()
    res["load_average"] = os.getloadavg()
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
