"""BatchNorm training forward and backward on ResNet-18's shapes (batch 8, NCHW float32), with MXNet 1.9.1 as a peer;
prints JSON.

For each shape, the CPU milliseconds (``time.process_time``: every thread of the process) and wall milliseconds
of one forward (batch statistics, ``fix_gamma=False``) and one backward, best of ``--reps`` runs in each of
``--rounds`` rounds, the median over rounds:

* ``mxasync_kernel``: the kernels as the numpy backend runs them (``run=NUMPY``, output arrays given, as the op
  passes them);
* ``mxasync_executor`` and ``mxnet_executor``: one ``BatchNorm`` symbol bound with ``simple_bind``,
  ``forward(is_train=True)`` then ``backward``, the same code on both libraries (MXNet's runs oneDNN's
  BatchNorm); MXNet runs in a subprocess (``--mxnet PY``, default /work/venvs/mx191/bin/python, skipped when
  missing): this file with ``--peer``, which imports nothing of mxasync.

* ``baseline_kernel`` (with ``--baseline DIR``): the kernels of another mxasync source tree (say
  ``git archive COMMIT | tar -x -C DIR``), measured in a subprocess in the same rounds, interleaved.

``resnet18_step`` sums each column over the 20 BatchNorm layers of one ResNet-18 step. Never asserts.

Usage: ``python benchmarks/batch_norm.py [--rounds 3] [--reps 5] [--mxnet PY] [--baseline DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# ResNet-18 v1 at 224x224, batch 8: each BatchNorm input shape and how many layers have it
SHAPES = [((8, 64, 112, 112), 1), ((8, 64, 56, 56), 4), ((8, 128, 28, 28), 5), ((8, 256, 14, 14), 5),
          ((8, 512, 7, 7), 5)]


def _best(fn, reps: int) -> tuple[float, float]:
    """Least CPU and least wall milliseconds of ``reps`` runs of ``fn()`` (after one warm-up run)."""
    fn()
    cpu = wall = float("inf")
    for _ in range(reps):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return cpu * 1e3, wall * 1e3


def _inputs(np, shape):
    rng = np.random.default_rng(0)
    c = shape[1]
    x = (rng.standard_normal(shape, dtype=np.float32) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal(shape, dtype=np.float32)
    gamma, beta = (rng.random(c) + 0.5).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    return x, dy, gamma, beta


def executor_ms(mx, shape, reps: int) -> dict:
    """Forward and backward milliseconds of one bound ``BatchNorm`` symbol (works on MXNet and on mxasync)."""
    import numpy as np

    x, dy, gamma, beta = _inputs(np, shape)
    net = mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=False, name="bn")
    exe = net.simple_bind(mx.cpu(), data=shape, grad_req="write")
    exe.arg_dict["data"][:] = x
    exe.arg_dict["bn_gamma"][:] = gamma
    exe.arg_dict["bn_beta"][:] = beta
    head = mx.nd.array(dy)

    def forward():
        exe.forward(is_train=True)
        mx.nd.waitall()

    def backward():
        exe.backward([head])
        mx.nd.waitall()

    forward()
    return _pair(_best(forward, reps), _best(backward, reps))


def kernel_ms(shape, reps: int) -> dict:
    """Forward and backward milliseconds of mxasync's kernels as the numpy backend runs them."""
    import numpy as np

    from mxasync.backends.numpy.kernels.runner import NUMPY
    from mxasync.operator.kernels import batch_norm as bnk

    x, dy, gamma, beta = _inputs(np, shape)
    c = shape[1]
    mm, mv = np.zeros(c, np.float32), np.ones(c, np.float32)
    out, dx = np.empty_like(x), np.empty_like(x)
    _, mean, invstd = bnk.batch_norm(np, x, gamma, beta, mm, mv, fix_gamma=False, run=NUMPY, out=out)

    def forward():
        bnk.batch_norm(np, x, gamma, beta, mm, mv, fix_gamma=False, run=NUMPY, out=out)

    def backward():
        bnk.batch_norm_backward(np, dy, x, gamma, mean, invstd, fix_gamma=False, run=NUMPY, data_grad=dx)

    return _pair(_best(forward, reps), _best(backward, reps))


def _pair(fwd, bwd) -> dict:
    return {"forward_cpu_ms": fwd[0], "forward_wall_ms": fwd[1], "backward_cpu_ms": bwd[0], "backward_wall_ms": bwd[1]}


def _peer(python: str, reps: int, kind: str = "mxnet", tree: str | None = None) -> list[dict] | None:
    """``kind`` (``mxnet``: the executor on MXNet; ``kernel``: mxasync's kernels from ``tree``) in a subprocess."""
    if not os.path.exists(python):
        return None
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree
    out = subprocess.run([python, __file__, "--peer", kind, "--reps", str(reps)], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout)


def _median_rows(per_round: list[list[dict]]) -> list[dict]:
    return [{k: round(statistics.median(r[i][k] for r in per_round), 3) for k in per_round[0][i]}
            for i in range(len(SHAPES))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mxnet", default="/work/venvs/mx191/bin/python")
    ap.add_argument("--baseline", default=None, help="another mxasync source tree whose kernels to measure too")
    ap.add_argument("--peer", choices=("mxnet", "kernel"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer == "mxnet":
        import mxnet

        print(json.dumps([executor_ms(mxnet, shape, args.reps) for shape, _ in SHAPES]))
        return
    if args.peer == "kernel":
        print(json.dumps([kernel_ms(shape, args.reps) for shape, _ in SHAPES]))
        return
    import mxasync

    runs: dict[str, list[list[dict]]] = {"mxasync_kernel": [], "baseline_kernel": [], "mxasync_executor": [],
                                         "mxnet_executor": []}
    for _ in range(args.rounds):
        runs["mxasync_kernel"].append([kernel_ms(shape, args.reps) for shape, _ in SHAPES])
        if args.baseline:
            runs["baseline_kernel"].append(_peer(sys.executable, args.reps, "kernel", os.path.abspath(args.baseline)))
        runs["mxasync_executor"].append([executor_ms(mxasync, shape, args.reps) for shape, _ in SHAPES])
        peer = _peer(args.mxnet, args.reps)
        if peer is not None:
            runs["mxnet_executor"].append(peer)
    medians = {name: _median_rows(per_round) for name, per_round in runs.items() if per_round}
    rows = [{"shape": "x".join(map(str, shape)), "layers_in_resnet18": n,
             **{name: m[i] for name, m in medians.items()}} for i, (shape, n) in enumerate(SHAPES)]
    step = {name: {k: round(sum(n * m[i][k] for i, (_, n) in enumerate(SHAPES)), 2) for k in m[0]}
            for name, m in medians.items()}
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
               "kernel_threads": os.environ.get("MXASYNC_KERNEL_THREADS", "default (cores)")}
    print(json.dumps({"machine": machine, "baseline": args.baseline, "rounds": args.rounds, "reps": args.reps,
                      "shapes": rows,
                      "resnet18_step": step}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
