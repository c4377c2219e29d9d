"""Per-layer-kind time of MobileNet v1 1.0 inference (batch 8, 3x128x128, hybridized), from the profiler.

Each op runs as its own engine op (``MXASYNC_EXEC_BULK_EXEC_MAX_NODE=1`` is set before import), so the
profiler's per-op ranges (wall time) add up to the step; the ops are grouped by kind: the stem,
depthwise 3x3 by output plane and stride, pointwise 1x1 by plane, BatchNorm, Activation, and the rest
(``(+BN)``: a convolution run with its BatchNorm folded in).  Also prints CPU ms per step
(``process_time``) without the profiler.  JSON to stdout, or ``--json PATH``.  ``--cpu-only`` times
the step alone, with the engine's default bulking (the suite's setting).

    PYTHONPATH=$PWD python benchmarks/mobilenet_layers.py --steps 10
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict

import numpy as np

CPU_ONLY = "--cpu-only" in sys.argv
if not CPU_ONLY:
    os.environ.setdefault("MXASYNC_EXEC_BULK_EXEC_MAX_NODE", "1")

import mxasync as mx  # noqa: E402
from mxasync.gluon.model_zoo import vision  # noqa: E402


def _kinds(net, shape) -> dict[str, str]:
    """Node name -> kind label, from the hybridized net's symbol and inferred shapes."""
    sym = net(mx.sym.var("data"))
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(data=shape)
    plane = dict(zip(internals.list_outputs(), out_shapes, strict=True))
    kinds = {}
    for node in json.loads(sym.tojson())["nodes"]:
        op, name, attrs = node["op"], node["name"], node.get("attrs", {})
        if op == "null":
            continue
        out = plane.get(name + "_output")
        if op == "Convolution":
            s = f"{out[2]}x{out[3]}"
            if attrs["num_group"] != "1":
                kinds[name] = f"depthwise {s} stride {attrs['stride'][1]}"
            elif attrs["kernel"] == "(1, 1)":
                kinds[name] = f"pointwise {s}"
            else:
                kinds[name] = f"stem {s}"
        else:
            kinds[name] = op
    return kinds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--json", default="")
    ap.add_argument("--cpu-only", action="store_true", help="time the step only (default bulking)")
    args = ap.parse_args()
    shape = (8, 3, 128, 128)
    net = vision.mobilenet1_0(classes=1000)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    data = mx.nd.array(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    for _ in range(3):
        net(data).wait_to_read()
    t0 = time.process_time()
    for _ in range(args.steps):
        net(data).wait_to_read()
    cpu_ms = (time.process_time() - t0) * 1e3 / args.steps
    if args.cpu_only:
        print(json.dumps({"cpu_ms_per_step": round(cpu_ms, 2)}))
        return
    kinds = _kinds(net, shape)
    mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=os.devnull)
    mx.profiler.set_state("run")
    for _ in range(args.steps):
        net(data).wait_to_read()
    mx.profiler.set_state("stop")
    stats = json.loads(mx.profiler.dumps(reset=True, format="json"))["Time"]
    by_kind: dict = defaultdict(float)
    for domain in stats.values():
        for name, s in domain.items():
            if name.endswith("_fwd_fold"):  # the folded BatchNorm's weight scaling (inference_fold.py)
                kind = "BatchNorm fold"
            else:
                node = name.removesuffix("_folded")
                kind = kinds.get(node, "other: " + name) + (" (+BN)" if name.endswith("_folded") else "")
            by_kind[kind] += s["Total"] / args.steps
    report = {"cpu_ms_per_step": round(cpu_ms, 2),
              "profiled_ms_per_step": round(sum(by_kind.values()), 2),
              "by_kind_ms": {k: round(v, 2) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])}}
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
