"""ResNet-18's convolution layers (batch 8) on the numpy backend's convolution core, against MXNet 1.9.1.

Each layer runs a training step's three parts: the forward (keeping what the weight gradient takes),
the data gradient (not for the stem, whose input needs none) and the weight gradient, each timed
apart (CPU ms, ``time.process_time``).  Checkouts given by ``--tree NAME=PATH`` take turns round after
round (each in its own process, with its ``mxasync`` on the path), so a shared machine's load falls on
all alike; MXNet (``--mxnet PY``, default /work/venvs/mx191/bin/python, skipped when missing) runs the
same layers imperatively (``Convolution`` under autograd: forward, then forward + backward).
``--threads 1`` sets ``MXASYNC_BLAS_THREADS=1 MXASYNC_KERNEL_THREADS=1`` and ``OMP_NUM_THREADS=1``.

Usage: ``python benchmarks/resnet_conv_layers.py --tree before=/path/a --tree after=. [--rounds 3]
[--reps 3] [--threads 1] [--size 224|64] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# (in channels, out channels, input plane, stride, kernel, count in ResNet-18 v1)
LAYERS_224 = [(3, 64, 224, 2, 7, 1), (64, 64, 56, 1, 3, 4), (64, 128, 56, 2, 3, 1), (64, 128, 56, 2, 1, 1),
              (128, 128, 28, 1, 3, 3), (128, 256, 28, 2, 3, 1), (128, 256, 28, 2, 1, 1),
              (256, 256, 14, 1, 3, 3), (256, 512, 14, 2, 3, 1), (256, 512, 14, 2, 1, 1), (512, 512, 7, 1, 3, 3)]
BATCH = 8


def layers(size: int) -> list[tuple]:
    """The layers for a ``size`` x ``size`` input (the suite's 224 and 64)."""
    scale = size / 224
    return [(c, f, max(1, round(hw * scale)), s, k, n) for c, f, hw, s, k, n in LAYERS_224]


def _ours(layer: tuple, reps: int) -> dict:
    import numpy as np

    from mxasync.backends.numpy.kernels.conv import _core as core

    c, f, hw, s, k, _ = layer
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, c, hw, hw), dtype=np.float32)
    w = rng.standard_normal((1, f, c * k * k), dtype=np.float32) * 0.01
    geo = ((k, k), (s, s), (1, 1), (k // 2, k // 2))
    dy = rng.standard_normal(core.conv_forward(np, x, w, *geo).shape, dtype=np.float32)
    parts = {"forward": [], "data_grad": [], "weight_grad": []}
    clock = time.process_time
    for rep in range(reps + 1):  # the first warms up
        t0 = clock()
        core.conv_forward(np, x, w, *geo, keep=True)
        t1 = clock()
        if c != 3:
            core.conv_backward_data(np, dy, w, (hw, hw), *geo)
        t2 = clock()
        core.conv_backward_weight(np, x, dy, 1, *geo)
        t3 = clock()
        if rep:
            for key, ms in zip(parts, ((t1 - t0), (t2 - t1), (t3 - t2)), strict=True):
                parts[key].append(ms * 1e3)
    if c == 3:
        parts["data_grad"] = [0.0]  # the stem's input needs no gradient
    return {key: min(v) for key, v in parts.items()}


def _mxnet(layer: tuple, reps: int) -> dict:
    import mxnet as mx
    import numpy as np

    c, f, hw, s, k, _ = layer
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((BATCH, c, hw, hw)).astype(np.float32))
    w = mx.nd.array(rng.standard_normal((f, c, k, k)).astype(np.float32) * 0.01)
    if c != 3:
        x.attach_grad()
    w.attach_grad()

    def step(backward: bool) -> None:
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, kernel=(k, k), stride=(s, s), pad=(k // 2, k // 2), num_filter=f,
                                  no_bias=True)
        if backward:
            y.backward()
        mx.nd.waitall()

    best = []
    for backward in (False, True):
        step(backward)
        times = []
        for _ in range(reps):
            t0 = time.process_time()
            step(backward)
            times.append((time.process_time() - t0) * 1e3)
        best.append(min(times))
    return {"forward": best[0], "step": best[1]}  # the step: forward and backward


def _worker(kind: str, size: int, reps: int) -> None:
    run = _ours if kind == "ours" else _mxnet
    print(json.dumps([run(layer, reps) for layer in layers(size)]))


def _spawn(python: str, path: str | None, args, kind: str) -> list[dict]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.path.abspath(path)
    if args.threads:
        env.update(MXASYNC_BLAS_THREADS=str(args.threads), MXASYNC_KERNEL_THREADS=str(args.threads),
                   OMP_NUM_THREADS=str(args.threads))
    else:
        env.setdefault("OMP_NUM_THREADS", "2")
    cmd = [python, os.path.abspath(__file__), "--worker", kind, "--size", str(args.size), "--reps", str(args.reps)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (repeatable)")
    ap.add_argument("--mxnet", default="/work/venvs/mx191/bin/python")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="1: one thread everywhere (0: each one's default)")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--stat", choices=("min", "median"), default="min",
                    help="over rounds (each round's figure is its best repetition): min resists the load best")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker, args.size, args.reps)
        return
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": os.path.dirname(os.path.dirname(__file__)) or "."}
    runs: dict[str, list] = {name: [] for name in trees}
    if args.mxnet and os.path.exists(args.mxnet):
        runs["mxnet"] = []
    for _ in range(args.rounds):
        for name, path in trees.items():
            runs[name].append(_spawn(sys.executable, path, args, "ours"))
        if "mxnet" in runs:
            runs["mxnet"].append(_spawn(args.mxnet, None, args, "mxnet"))
    stat = min if args.stat == "min" else statistics.median
    table = []
    for i, layer in enumerate(layers(args.size)):
        c, f, hw, s, k, count = layer
        row = {"layer": f"{c}->{f} {hw}x{hw} k{k} s{s} (x{count})"}
        for name, rounds in runs.items():
            parts = {key: stat(r[i][key] for r in rounds) for key in rounds[0][i]}
            row[name] = dict(parts, total=parts["step"] if "step" in parts else sum(parts.values()))
        table.append(row)
        print(row["layer"], " | ".join(f"{name} {row[name]['total']:.1f}" for name in runs))
    totals = {name: sum(row[name]["total"] * layer[5] for row, layer in zip(table, layers(args.size), strict=True))
              for name in runs}
    print("network (each layer times its count):", " | ".join(f"{k} {v:.0f} ms" for k, v in totals.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"size": args.size, "batch": BATCH, "threads": args.threads, "rounds": args.rounds,
                       "stat": args.stat, "layers": table, "network_ms": totals, "load_after": os.getloadavg()}, fh, indent=1)


if __name__ == "__main__":
    main()
