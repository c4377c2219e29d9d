"""ResNet-18 inference on CPU, float32 against INT8 (``mx.contrib.quantization.quantize_net``), in the same
run, with MXNet 1.9.1 (MKLDNN) doing the same in a subprocess as the peer: prints one JSON object.

    python benchmarks/quantization.py [--batch 4] [--size 224] [--repeat 3] [--mxnet-python PATH|none]

Per framework and precision: ms per batch (best of ``--repeat``, after a warm-up) as CPU time
(``process_time``, the figure that holds on a shared machine) and wall time; the parameters as the
quantized graph holds them (bytes by dtype: MXNet's CPU flow keeps convolution weights in float32 and
quantizes them when it first runs, only FullyConnected weights are stored as int8), the saved
``.params`` file; and, for mxasync, the peak of numpy allocations during one forward (tracemalloc).
The model is model-zoo ``resnet18_v1`` with random weights (seeded), calibrated ('naive') on 8 random
images: the timing and sizes do not depend on what the weights learnt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

_PEER = r"""
import json, os, sys, tempfile, time
import numpy as np, mxnet as mx
from mxnet.contrib import quantization as q
batch, size, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
mx.random.seed(0)
net = mx.gluon.model_zoo.vision.resnet18_v1()
net.initialize(mx.init.Xavier())
net.hybridize()
x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (batch, 3, size, size)))
calib = mx.io.NDArrayIter(mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (8, 3, size, size))), batch_size=4)
qnet = q.quantize_net(net, quantized_dtype='auto', calib_mode='naive', calib_data=calib, ctx=mx.cpu())
out = {}
for name, model in (("fp32", net), ("int8", qnet)):
    model(x).wait_to_read()
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        model(x).wait_to_read()
        cpu.append(time.process_time() - c0); wall.append(time.perf_counter() - w0)
    d = tempfile.mkdtemp()
    model.export(os.path.join(d, "m"), 0)
    out[name] = {"cpu_ms": 1e3 * min(cpu), "wall_ms": 1e3 * min(wall),
                 "params_file_bytes": os.path.getsize(os.path.join(d, "m-0000.params"))}
print(json.dumps(out))
"""


def _param_bytes(block) -> dict:
    by_dtype: dict[str, int] = {}
    for p in block.collect_params().values():
        arr = p.data()
        dt = np.dtype(arr.dtype)
        by_dtype[dt.name] = by_dtype.get(dt.name, 0) + int(np.prod(arr.shape)) * dt.itemsize
    return by_dtype


def _time(model, x, repeat: int) -> dict:
    model(x).wait_to_read()  # warm-up: plans, kernels, pools
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        model(x).wait_to_read()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"cpu_ms": round(1e3 * min(cpu), 1), "wall_ms": round(1e3 * min(wall), 1)}


def _peak_forward_bytes(model, x) -> int:
    tracemalloc.start()
    model(x).wait_to_read()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def run_mxasync(batch: int, size: int, repeat: int) -> dict:
    import mxasync as mx
    from mxasync.contrib import quantization as q

    mx.random.seed(0)
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (batch, 3, size, size)))
    calib = mx.io.NDArrayIter(mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (8, 3, size, size))), batch_size=4)
    t0 = time.perf_counter()
    qnet = q.quantize_net(net, quantized_dtype="auto", calib_mode="naive", calib_data=calib, ctx=mx.cpu())
    quantize_s = time.perf_counter() - t0
    out = {}
    for name, model in (("fp32", net), ("int8", qnet)):
        res = _time(model, x, repeat)
        with tempfile.TemporaryDirectory() as d:
            model.export(os.path.join(d, "m"), 0)
            res["params_file_bytes"] = os.path.getsize(os.path.join(d, "m-0000.params"))
        res["param_bytes_by_dtype"] = _param_bytes(model)
        res["forward_peak_alloc_bytes"] = _peak_forward_bytes(model, x)
        out[name] = res
    diff = np.abs(qnet(x).asnumpy() - net(x).asnumpy())
    out["int8_vs_fp32_max_abs_diff"] = float(diff.max())
    out["quantize_net_seconds"] = round(quantize_s, 2)
    return out


def run_mxnet(python: str, batch: int, size: int, repeat: int) -> dict | None:
    if python == "none" or not os.path.exists(python):
        return None
    done = subprocess.run([python, "-c", _PEER, str(batch), str(size), str(repeat)], capture_output=True, text=True)
    if done.returncode:
        return {"error": done.stderr[-500:]}
    res = json.loads(done.stdout.strip().splitlines()[-1])
    for v in res.values():
        v["cpu_ms"], v["wall_ms"] = round(v["cpu_ms"], 1), round(v["wall_ms"], 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mxnet-python", default="/work/venvs/mx191/bin/python")
    args = ap.parse_args()
    result = {
        "benchmark": "resnet18_v1 inference, fp32 vs int8",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared with other sessions)",
        "date": time.strftime("%Y-%m-%d"),
        "batch": args.batch, "image": [3, args.size, args.size],
        "mxasync": run_mxasync(args.batch, args.size, args.repeat),
        "mxnet_1.9.1_mkldnn": run_mxnet(args.mxnet_python, args.batch, args.size, args.repeat),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    sys.exit(main())
