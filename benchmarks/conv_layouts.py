"""MobileNet-1.0's convolution layers (batch 8) on the numpy backend: each columnless layout against the
layout the layer took before it (the same run, alternating), with MXNet 1.9.1 as a peer; prints JSON.

The depthwise layout (``_depthwise.py``) and the unit 1x1 one (one batched GEMM, ``_core._columnless``)
are switched off by patching their rules, so "generic" is what the layer ran before they existed.
MXNet (``--mxnet PY``, default /work/venvs/mx191/bin/python, skipped when missing) runs the same layers
imperatively in a subprocess: this file with ``--peer``, which imports nothing of mxasync.

Usage: ``python benchmarks/conv_layouts.py [--rounds 3] [--reps 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# (channels, plane, stride, groups, filters, kernel): MobileNet-1.0's depthwise and pointwise layer kinds
LAYERS = [(32, 112, 1, 32, 32, 3), (64, 112, 2, 64, 64, 3), (128, 56, 1, 128, 128, 3), (256, 28, 1, 256, 256, 3),
          (512, 14, 1, 512, 512, 3), (32, 112, 1, 1, 64, 1), (128, 56, 1, 1, 128, 1), (256, 28, 1, 1, 256, 1),
          (512, 14, 1, 1, 512, 1), (1024, 7, 1, 1, 1024, 1)]
BATCH = 8


def _cpu_ms(mx, layer, reps: int) -> float:
    import numpy as np

    c, hw, s, g, f, k = layer
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((BATCH, c, hw, hw)).astype(np.float32))
    w = mx.nd.array(rng.standard_normal((f, c // g, k, k)).astype(np.float32))

    def run():
        return mx.nd.Convolution(x, w, kernel=(k, k), stride=(s, s), pad=(k // 2, k // 2), num_filter=f,
                                 num_group=g, no_bias=True)

    run().wait_to_read()
    c0 = time.process_time()
    for _ in range(reps):
        y = run()
    y.wait_to_read()
    return (time.process_time() - c0) / reps * 1e3


def _mxasync(reps: int, columnless: bool) -> list[float]:
    import mxasync as mx
    from mxasync.backends.numpy.kernels.conv import _core, _depthwise

    pays, core = _depthwise.pays, _core._columnless
    if not columnless:
        _core._columnless = lambda *a: False
    try:
        return [_cpu_ms(mx, layer, reps) for layer in LAYERS]
    finally:
        _depthwise.pays, _core._columnless = pays, core


def _peer(python: str, reps: int) -> list[float] | None:
    if not os.path.exists(python):
        return None
    env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count() or 1))
    out = subprocess.run([python, __file__, "--peer", "--reps", str(reps)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mxnet", default="/work/venvs/mx191/bin/python")
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        import mxnet

        print(json.dumps([_cpu_ms(mxnet, layer, args.reps) for layer in LAYERS]))
        return
    runs: dict[str, list[list[float]]] = {"generic": [], "columnless": [], "mxnet": []}
    for _ in range(args.rounds):
        runs["generic"].append(_mxasync(args.reps, False))
        runs["columnless"].append(_mxasync(args.reps, True))
        peer = _peer(args.mxnet, args.reps)
        if peer is not None:
            runs["mxnet"].append(peer)
    rows = []
    for i, layer in enumerate(LAYERS):
        row = {"layer": dict(zip(("channels", "plane", "stride", "groups", "filters", "kernel"), layer))}
        for name, per_round in runs.items():
            if per_round:
                row[f"{name}_cpu_ms"] = round(statistics.median(r[i] for r in per_round), 2)
        rows.append(row)
    print(json.dumps({"batch": BATCH, "rounds": args.rounds, "load_average": os.getloadavg(), "layers": rows},
                     indent=1))


if __name__ == "__main__":
    sys.exit(main())
