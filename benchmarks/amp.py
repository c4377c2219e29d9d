"""ResNet-18 v1 inference in float32, bfloat16 and float16 (AMP-converted), and the model-size reduction.

    python benchmarks/amp.py [--batch 1] [--size 224] [--iters 5]
    python benchmarks/amp.py --mxnet /work/venvs/mx191/bin/python     # MXNet 1.9.1 side by side

Prints one JSON object.  Per precision: ms per batch (median of ``--iters``; process CPU time and
wall time), the parameters' bytes in memory and in a saved ``.params`` file, and how far the outputs
are from float32 (max abs difference, and relative to the largest output).  The low-precision models are made as MXNet's
deployment flow makes them: ``amp.convert_hybrid_block(net, target_dtype, cast_optional_params=True)``
(convolution and dense weights stored in the low type, BatchNorm kept in float32).

With ``--mxnet`` the same measurement runs under MXNet 1.9.1 (this file, ``--framework mxnet``, in that
interpreter) for float32 and bfloat16 (MXNet's CPU has no float16 convolution), from the same weights.

The numpy backend has no half-precision BLAS: a float16 or bfloat16 op runs its float32 kernel on
float32 copies of its inputs and rounds its outputs (mxasync/operator/widen.py), so the low types
save memory and file size here, not time: the casts add to the float32 work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def _framework(name: str):
    if name == "mxnet":
        import mxnet as mx
        from mxnet.contrib import amp
    else:
        import mxasync as mx
        from mxasync.contrib import amp
    return mx, amp


def _param_bytes(block) -> int:
    arrays = [p.data() for p in block.collect_params().values()]
    return sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in arrays)


def _file_bytes(block, mx) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.params")
        mx.nd.save(path, {k: p.data() for k, p in block.collect_params().items()})
        return os.path.getsize(path)


def _time(block, x, iters: int) -> dict:
    block(x).wait_to_read()  # warm-up: plans, kernels, pools
    cpu, wall = [], []
    for _ in range(iters):
        c0, w0 = time.process_time(), time.perf_counter()
        block(x).wait_to_read()
        cpu.append(1e3 * (time.process_time() - c0))
        wall.append(1e3 * (time.perf_counter() - w0))
    return {"cpu_ms": round(statistics.median(cpu), 1), "wall_ms": round(statistics.median(wall), 1)}


def measure(framework: str, precisions: list[str], batch: int, size: int, iters: int) -> dict:
    mx, amp = _framework(framework)
    mx.random.seed(0)
    net = mx.gluon.model_zoo.vision.resnet18_v1(pretrained=False)
    net.initialize(mx.init.Xavier(magnitude=2))
    net.hybridize()
    x = mx.nd.array(np.random.default_rng(0).random((batch, 3, size, size), dtype=np.float32))
    reference = net(x).asnumpy()
    out = {}
    for precision in precisions:
        block = net if precision == "float32" else amp.convert_hybrid_block(
            net, target_dtype=precision, ctx=mx.cpu(), cast_optional_params=True)
        y = block(x).astype("float32").asnumpy()
        out[precision] = {**_time(block, x, iters), "param_bytes": _param_bytes(block),
                          "params_file_bytes": _file_bytes(block, mx),
                          "max_abs_diff_vs_fp32": float(np.abs(y - reference).max()),
                          "max_rel_diff_vs_fp32": float(np.abs(y - reference).max() / np.abs(reference).max())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--framework", default="mxasync", choices=["mxasync", "mxnet"])
    parser.add_argument("--precisions", default="float32,bfloat16,float16")
    parser.add_argument("--mxnet", help="an interpreter with MXNet 1.9.1: measure it too, side by side")
    args = parser.parse_args()
    result = {"machine": os.uname().nodename, "cpus": os.cpu_count(), "batch": args.batch, "size": args.size,
              "iters": args.iters, args.framework: measure(args.framework, args.precisions.split(","), args.batch,
                                                          args.size, args.iters)}
    if args.mxnet:
        cmd = [args.mxnet, __file__, "--framework", "mxnet", "--precisions", "float32,bfloat16",
               "--batch", str(args.batch), "--size", str(args.size), "--iters", str(args.iters)]
        run = subprocess.run(cmd, capture_output=True, text=True, check=True)
        result["mxnet"] = json.loads(run.stdout)["mxnet"]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
