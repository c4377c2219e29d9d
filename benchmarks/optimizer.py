"""Optimizer update kernels (sgd_mom, adam) against the same maths as plain whole-array numpy passes.

    python benchmarks/optimizer.py [--repeat N] [--sweeps N] [--sizes 401408,4014080] [--blocks 16384,32768] [--dtype float64]

Prints JSON: per kernel and weight size (float32 unless ``--dtype``), the milliseconds of one in-place update (best of
``sweeps x repeat`` back-to-back runs) for

* ``mxasync``: ``kernels.sgd_mom_update`` / ``adam_update`` as the library runs them (cache-sized blocks,
  split over the kernel threads when the weight is big and a core is idle);
* ``mxasync_1thread``: the same with the kernel threads off (blocking alone);
* ``numpy_passes``: the same passes over whole arrays, into preallocated scratch (no temporaries);
* with ``--blocks``: ``block_N``, one thread, blocks of N elements (the sweep behind ``blocked.BLOCK_BYTES`` of the numpy backend's kernels).

Never asserts. Weights 401408 (a 784x512 layer) and 4014080 by default.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable

import numpy as np

from mxasync.backends.numpy import parallel
from mxasync.backends.numpy.kernels import blocked as _blocked
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels import optimizer as k_optimizer

LR, MOMENTUM, WD, RESCALE = 0.05, 0.9, 1e-4, 1.0 / 128
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


def sgd_mom_numpy(w, g, m, tmp):
    """MXNet's sgd_mom as whole-array passes: ``mom = momentum*mom - lr*wd*w - lr*rescale*g``; ``w += mom``."""
    m *= MOMENTUM
    np.multiply(w, LR * WD, out=tmp)
    m -= tmp
    np.multiply(g, LR * RESCALE, out=tmp)
    m -= tmp
    w += m


def adam_numpy(w, g, mean, var, tmp, tmp2):
    """MXNet's adam as whole-array passes (wd added before the moments)."""
    np.multiply(g, RESCALE, out=tmp)
    np.multiply(w, WD, out=tmp2)
    tmp += tmp2
    mean *= BETA1
    np.multiply(tmp, 1 - BETA1, out=tmp2)
    mean += tmp2
    var *= BETA2
    np.multiply(tmp, 1 - BETA2, out=tmp2)
    tmp2 *= tmp
    var += tmp2
    np.sqrt(var, out=tmp2)
    tmp2 += EPS
    np.multiply(mean, LR, out=tmp)
    tmp /= tmp2
    w -= tmp


def candidates(kernel: str, n: int, blocks: list[int], dtype: str) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(0)
    w, g = rng.standard_normal(n, dtype=dtype), rng.standard_normal(n, dtype=dtype)
    state = [np.abs(rng.standard_normal(n, dtype=dtype)) * 0.01 for _ in range(1 if kernel == "sgd_mom" else 2)]
    tmps = [np.empty_like(w) for _ in range(2)]
    if kernel == "sgd_mom":
        ours = lambda: k_optimizer.sgd_mom_update(np, w, g, *state, LR, MOMENTUM, WD, RESCALE, run=NUMPY)  # noqa: E731
        plain = lambda: sgd_mom_numpy(w, g, *state, tmps[0])  # noqa: E731
    else:
        ours = lambda: k_optimizer.adam_update(np, w, g, *state, LR, BETA1, BETA2, EPS, WD, RESCALE,  # noqa: E731
                                               run=NUMPY)
        plain = lambda: adam_numpy(w, g, *state, *tmps)  # noqa: E731

    def with_settings(threads: int, block: int | None = None) -> Callable[[], None]:
        def run() -> None:
            saved = parallel._NTHREADS, _blocked.BLOCK_BYTES
            parallel._NTHREADS = threads
            _blocked.BLOCK_BYTES = block * w.itemsize if block else saved[1]
            try:
                ours()
            finally:
                parallel._NTHREADS, _blocked.BLOCK_BYTES = saved
        return run

    out = {"mxasync": ours, "mxasync_1thread": with_settings(1), "numpy_passes": plain}
    out.update({f"block_{b}": with_settings(1, b) for b in blocks})
    return out


def best_ms(runs: dict[str, Callable[[], None]], repeat: int, sweeps: int) -> dict[str, float]:
    """Best ms per candidate; sweeping over the candidates several times keeps a burst of other load from
    landing on one of them only."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(sweeps):
        for name, fn in runs.items():
            fn()  # warm-up: page faults, caches
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
    return {name: round(1e3 * t, 3) for name, t in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10, help="back-to-back runs per candidate and sweep")
    ap.add_argument("--sweeps", type=int, default=3, help="rounds over all candidates")
    ap.add_argument("--sizes", default="401408,4014080", help="weight sizes (elements, comma-separated)")
    ap.add_argument("--blocks", default="", help="also time one thread with these block sizes (elements)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = ap.parse_args()
    blocks = [int(b) for b in args.blocks.split(",") if b]
    results = {}
    for kernel in ("sgd_mom", "adam"):
        for n in (int(s) for s in args.sizes.split(",")):
            times = best_ms(candidates(kernel, n, blocks, args.dtype), args.repeat, args.sweeps)
            times["speedup_vs_numpy_passes"] = round(times["numpy_passes"] / times["mxasync"], 2)
            results[f"{kernel}_{n}"] = times
    info = {
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "kernel_threads": parallel._NTHREADS,
        "block_elements": _blocked.block_size(args.dtype),
        "dtype": args.dtype,
        "timing": f"best of {args.sweeps} sweeps x {args.repeat} back-to-back runs, milliseconds",
    }
    print(json.dumps({"machine": info, "results": results}, indent=2))


if __name__ == "__main__":
    main()
