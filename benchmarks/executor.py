"""Executor benchmark: memory planning and LeNet training speed; prints JSON.

* bytes of internal arrays with the memory planner (in-place + reuse) and
  without it, for training and for inference, on an MLP, a LeNet and a
  ResNet-18-shaped network;
* LeNet forward+backward time through the executor against a hand-written
  numpy implementation of the same network, measured in the same run;
* ``simple_bind`` time (wall and CPU) of chains of 1k-20k nodes (alternating ``x * 1.5``
  and relu), against MXNet 1.9.1 binding the same chain in a subprocess when
  ``--mxnet`` names its Python (default ``/work/mxref/bin/python`` if present).

Usage: ``python benchmarks/executor.py [--batch 64] [--repeat 20] [--bind-sizes 1000,2000,4000,8000,20000]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import mxasync as mx
from mxasync import symbol as sym


def mlp():
    h = sym.Variable("data")
    for i, n in enumerate((1024, 1024, 512)):
        h = sym.Activation(sym.FullyConnected(h, num_hidden=n, name=f"fc{i}"), act_type="relu", name=f"relu{i}")
    return sym.SoftmaxOutput(sym.FullyConnected(h, num_hidden=10, name="out"), name="softmax")


def lenet():
    h = sym.Convolution(sym.Variable("data"), kernel=(5, 5), num_filter=20, name="conv1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = sym.Activation(h, act_type="tanh", name="tanh2")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool2")
    h = sym.FullyConnected(sym.Flatten(h, name="flatten"), num_hidden=500, name="fc1")
    h = sym.FullyConnected(sym.Activation(h, act_type="relu", name="relu3"), num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def resnet18(num_classes: int = 1000):
    def unit(x, nf, stride, dim_match, name):
        h = sym.Activation(sym.BatchNorm(x, fix_gamma=False, name=f"{name}_bn1"), act_type="relu")
        c = sym.Convolution(h, kernel=(3, 3), stride=stride, pad=(1, 1), num_filter=nf, no_bias=True,
                            name=f"{name}_conv1")
        c = sym.Activation(sym.BatchNorm(c, fix_gamma=False, name=f"{name}_bn2"), act_type="relu")
        c = sym.Convolution(c, kernel=(3, 3), pad=(1, 1), num_filter=nf, no_bias=True, name=f"{name}_conv2")
        short = x if dim_match else sym.Convolution(h, kernel=(1, 1), stride=stride, num_filter=nf, no_bias=True,
                                                    name=f"{name}_sc")
        return c + short

    h = sym.Convolution(sym.Variable("data"), kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=64,
                        no_bias=True, name="conv0")
    h = sym.Activation(sym.BatchNorm(h, fix_gamma=False, name="bn0"), act_type="relu")
    h = sym.Pooling(h, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    for stage, nf in enumerate((64, 128, 256, 512)):
        stride = (1, 1) if stage == 0 else (2, 2)
        h = unit(h, nf, stride, stage == 0, f"stage{stage}_unit1")
        h = unit(h, nf, (1, 1), True, f"stage{stage}_unit2")
    h = sym.Activation(sym.BatchNorm(h, fix_gamma=False, name="bn_final"), act_type="relu")
    h = sym.Pooling(h, kernel=(7, 7), global_pool=True, pool_type="avg")
    return sym.SoftmaxOutput(sym.FullyConnected(sym.Flatten(h), num_hidden=num_classes), name="softmax")


def memory(net, shapes: dict) -> dict:
    out = {}
    for mode, req in (("training", "write"), ("inference", "null")):
        exe = net.simple_bind(mx.cpu(), grad_req=req, **shapes)
        out[mode] = {"planned_bytes": exe.planned_bytes, "unplanned_bytes": exe.unplanned_bytes,
                     "ratio": round(exe.planned_bytes / exe.unplanned_bytes, 3)}
    return out


# -- the same LeNet written directly in numpy ------------------------------------------------
def im2col(x, k):
    """(n, c, h, w) -> (n*oh*ow, c*k*k), contiguous, for one BLAS matmul."""
    n, c = x.shape[:2]
    cols = sliding_window_view(x, (k, k), axis=(2, 3))  # n, c, oh, ow, k, k
    oh, ow = cols.shape[2:4]
    return np.ascontiguousarray(cols.transpose(0, 2, 3, 1, 4, 5)).reshape(n * oh * ow, c * k * k), (n, oh, ow)


def conv_fwd(x, w, b):
    f, k = w.shape[0], w.shape[2]
    cols, (n, oh, ow) = im2col(x, k)
    out = (cols @ w.reshape(f, -1).T + b).reshape(n, oh, ow, f).transpose(0, 3, 1, 2)
    return out, cols


def conv_bwd(g, cols, w, x_shape):
    f, c, k = w.shape[0], w.shape[1], w.shape[2]
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, f)
    gw = (g2.T @ cols).reshape(w.shape)
    gb = g2.sum(axis=0)
    gp = np.pad(g, ((0, 0), (0, 0), (k - 1, k - 1), (k - 1, k - 1)))
    gcols, (n, oh, ow) = im2col(gp, k)
    wf = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3).reshape(c, -1)  # full convolution with the flipped kernel
    gx = (gcols @ wf.T).reshape(n, oh, ow, c).transpose(0, 3, 1, 2)
    return gx, gw, gb


def numpy_lenet_step(x, label, p):
    n = x.shape[0]
    c1, cols1 = conv_fwd(x, p["conv1_weight"], p["conv1_bias"])
    r1 = np.maximum(c1, 0)
    win = r1.reshape(n, 20, 12, 2, 12, 2)
    p1 = win.max(axis=(3, 5))
    c2, cols2 = conv_fwd(p1, p["conv2_weight"], p["conv2_bias"])
    t2 = np.tanh(c2)
    p2 = t2.reshape(n, 50, 4, 2, 4, 2).mean(axis=(3, 5))
    f = p2.reshape(n, -1)
    h1 = f @ p["fc1_weight"].T + p["fc1_bias"]
    r3 = np.maximum(h1, 0)
    z = r3 @ p["fc2_weight"].T + p["fc2_bias"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    g = prob.copy()
    g[np.arange(n), label.astype(int)] -= 1
    grads = {"fc2_weight": g.T @ r3, "fc2_bias": g.sum(0)}
    g = (g @ p["fc2_weight"]) * (h1 > 0)
    grads["fc1_weight"], grads["fc1_bias"] = g.T @ f, g.sum(0)
    g = (g @ p["fc1_weight"]).reshape(p2.shape)
    g = np.repeat(np.repeat(g, 2, axis=2), 2, axis=3) / 4 * (1 - t2 ** 2)
    g, grads["conv2_weight"], grads["conv2_bias"] = conv_bwd(g, cols2, p["conv2_weight"], p1.shape)
    mask = win == p1[:, :, :, None, :, None]
    g = (mask * g[:, :, :, None, :, None]).reshape(r1.shape) * (c1 > 0)
    _, grads["conv1_weight"], grads["conv1_bias"] = conv_bwd(g, cols1, p["conv1_weight"], x.shape)
    return prob, grads


def speed(batch: int, repeat: int) -> dict:
    rng = np.random.default_rng(0)
    net = lenet()
    exe = net.simple_bind(mx.cpu(), data=(batch, 1, 28, 28))
    params = {}
    for name, arr in exe.arg_dict.items():
        v = rng.uniform(-0.1, 0.1, arr.shape).astype(np.float32)
        if name == "softmax_label":
            v = rng.integers(0, 10, arr.shape).astype(np.float32)
        arr[:] = v
        params[name] = v

    def run_exe():
        exe.forward(is_train=True)
        exe.backward()
        for g in exe.grad_arrays:
            if g is not None:
                g.wait_to_read()

    def run_np():
        return numpy_lenet_step(params["data"], params["softmax_label"], params)

    run_exe()
    _, ref = run_np()
    err = max(float(np.abs(exe.grad_dict[k].asnumpy() - v).max() / (np.abs(v).max() + 1e-12)) for k, v in ref.items())
    times = {}
    for label, fn in (("executor", run_exe), ("numpy", run_np)):
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        times[label] = round(float(np.median(ts)) * 1e3, 3)
    return {"batch": batch, "median_ms": times, "executor_over_numpy": round(times["executor"] / times["numpy"], 3),
            "max_rel_grad_diff": err}


_CHAIN = """
import sys, time
n = int(sys.argv[1])
h = mx.sym.Variable("data")
for i in range(n):
    h = mx.sym.Activation(h, act_type="relu", name=f"a{i}") if i % 2 else h * 1.5
t0, c0 = time.perf_counter(), time.process_time()
exe = h.simple_bind(mx.cpu(), data=(2, 3))
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def _bind_once(python: str, module: str, n: int) -> tuple[float, float]:
    # a fresh process per size: no cache or garbage from the previous size
    code = f"import {module} as mx\n" + _CHAIN
    out = subprocess.run([python, "-c", code, str(n)], capture_output=True, text=True, timeout=1800, check=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def bind_times(sizes: list[int], mxnet: str | None) -> dict:
    """Seconds to ``simple_bind`` an n-node chain, ours and (when available) MXNet's, alternated."""
    res = {}
    for n in sizes:
        wall, cpu = _bind_once(sys.executable, "mxasync", n)
        row = {"mxasync_wall_s": round(wall, 3), "mxasync_cpu_s": round(cpu, 3)}
        if mxnet:
            mwall, mcpu = _bind_once(mxnet, "mxnet", n)
            row.update(mxnet_wall_s=round(mwall, 3), mxnet_cpu_s=round(mcpu, 3),
                       cpu_ratio=round(cpu / max(mcpu, 1e-9), 2))
        res[str(n)] = row
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--resnet-batch", type=int, default=4)
    ap.add_argument("--bind-sizes", default="1000,2000,4000,8000,20000",
                    help="chain lengths whose bind is timed ('' to skip)")
    default_mx = "/work/mxref/bin/python" if os.path.exists("/work/mxref/bin/python") else None
    ap.add_argument("--mxnet", default=default_mx, help="a Python with MXNet 1.9.1 for the bind comparison")
    args = ap.parse_args()
    result = {
        "memory": {
            "mlp": memory(mlp(), {"data": (args.batch, 784)}),
            "lenet": memory(lenet(), {"data": (args.batch, 1, 28, 28)}),
            "resnet18": memory(resnet18(), {"data": (args.resnet_batch, 3, 224, 224)}),
        },
        "lenet_forward_backward": speed(args.batch, args.repeat),
        "bind_chain": bind_times([int(n) for n in args.bind_sizes.split(",") if n], args.mxnet),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
