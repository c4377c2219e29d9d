"""Max pooling forward + backward: the mxasync kernel against strided views and plain numpy.

    python benchmarks/pooling.py [--repeat N] [--sweeps N] [--only NAME] [--threads N]

Prints JSON: for ResNet-18's first pool (3x3 stride 2 pad 1 on 8x64x112x112) and LeNet's two
2x2/2 pools, float32 on ReLU'd data (ties in many windows), the best forward/backward
milliseconds of

* ``mxasync``: the kernel as shipped (phase grid for overlapping windows, cache blocks);
* ``mxasync_strided_views``: the same kernel with the phase grid turned off (strided views of the
  padded input at every kernel offset, as before the phase grid);
* ``numpy_offsets``: the offset loop in plain numpy in one piece, as the kernel was before cache
  blocks and the phase grid (pad, a maximum per offset; first-maximum masks, a multiply and a
  strided add into the padded gradient per offset).

``--threads`` sets ``MXASYNC_KERNEL_THREADS`` (default 1: one core, steady numbers on a shared
machine). Never asserts.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import platform
import sys
import time


def best_ms(candidates: dict, repeat: int, sweeps: int) -> dict:
    """Best forward/backward ms per candidate over ``sweeps`` rounds of ``repeat`` back-to-back runs."""
    best = {name: [float("inf"), float("inf")] for name in candidates}
    for _ in range(sweeps):
        for name, fns in candidates.items():
            for i, fn in enumerate(fns):
                fn()  # warm-up: page faults, caches
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    fn()
                    best[name][i] = min(best[name][i], time.perf_counter() - t0)
    return {name: {"forward_ms": round(1e3 * f, 3), "backward_ms": round(1e3 * b, 3),
                   "total_ms": round(1e3 * (f + b), 3)} for name, (f, b) in best.items()}


def numpy_offsets(np, x, dy, k, s, p):
    """The offset loop over strided views in plain numpy, unblocked (2-D, square kernel)."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    offsets = list(itertools.product(range(k), range(k)))

    def view(a, i, j):
        return a[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s]

    def padded():
        xpad = np.full((n, c, h + 2 * p, w + 2 * p), np.finfo(x.dtype).min, x.dtype)
        xpad[:, :, p:p + h, p:p + w] = x
        return xpad

    def fwd():
        xpad = padded()
        out = view(xpad, 0, 0).copy()
        for i, j in offsets[1:]:
            np.maximum(out, view(xpad, i, j), out=out)
        return xpad, out

    def bwd():
        xpad, out = fwd()
        grad = np.zeros(xpad.shape, dy.dtype)
        taken = np.zeros(out.shape, bool)
        hit = np.empty(out.shape, bool)
        for i, j in offsets:
            np.equal(view(xpad, i, j), out, out=hit)
            np.greater(hit, taken, out=hit)
            taken |= hit
            view(grad, i, j)[...] += dy * hit
        return grad[:, :, p:p + h, p:p + w]

    return fwd, bwd


def phase_grid_off(pool, fn):
    """``fn`` run with the kernel's phase grid turned off: strided views at every kernel offset."""

    def run():
        saved, pool.MAX_PHASE_GROWTH = pool.MAX_PHASE_GROWTH, 0.0
        try:
            return fn()
        finally:
            pool.MAX_PHASE_GROWTH = saved

    return run


def candidates(np, pool, rng, shape, k, s, p) -> dict:
    from mxasync.backends.numpy.kernels.runner import NUMPY  # the numpy backend's runner, as its overrides use

    x = np.maximum(rng.standard_normal(shape, dtype=np.float32), 0)  # ReLU'd: ties at zero
    kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), pool_type="max")
    y = pool.pooling(np, x, run=NUMPY, **kw)
    dy = rng.standard_normal(y.shape, dtype=np.float32)
    kernel = (lambda: pool.pooling(np, x, run=NUMPY, **kw),
              lambda: pool.pooling_backward(np, dy, x, out=y, run=NUMPY, **kw))
    return {
        "mxasync": kernel,
        "mxasync_strided_views": tuple(phase_grid_off(pool, fn) for fn in kernel),
        "numpy_offsets": numpy_offsets(np, x, dy, k, s, p),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="back-to-back runs per candidate and sweep")
    ap.add_argument("--sweeps", type=int, default=3, help="rounds over all candidates")
    ap.add_argument("--only", default="", help="run workloads whose name contains this")
    ap.add_argument("--threads", type=int, default=1, help="MXASYNC_KERNEL_THREADS for the kernel")
    args = ap.parse_args()
    os.environ["MXASYNC_KERNEL_THREADS"] = str(args.threads)  # read when the backend is imported
    import numpy as np

    pool = importlib.import_module("mxasync.operator.kernels.pooling")
    from mxasync.backends.numpy import parallel

    workloads = {
        "resnet18_pool1_3x3s2p1": ((8, 64, 112, 112), 3, 2, 1),
        "lenet_pool1_2x2s2": ((64, 20, 24, 24), 2, 2, 0),
        "lenet_pool2_2x2s2": ((64, 50, 8, 8), 2, 2, 0),
    }
    rng = np.random.default_rng(0)
    results = {}
    for name, (shape, k, s, p) in workloads.items():
        if args.only not in name:
            continue
        times = best_ms(candidates(np, pool, rng, shape, k, s, p), args.repeat, args.sweeps)
        ours = times["mxasync"]["total_ms"]
        speedup = {c: round(t["total_ms"] / ours, 2) for c, t in times.items() if c != "mxasync"}
        results[name] = {"shape": "x".join(map(str, shape)), **times, "mxasync_speedup_total_vs": speedup}
    info = {
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "kernel_threads": parallel.nthreads(),
        "loadavg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "dtype": "float32",
        "timing": "best of sweeps x repeat back-to-back runs, milliseconds",
    }
    json.dump({"machine": info, "results": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
