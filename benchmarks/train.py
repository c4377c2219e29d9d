"""Training-step benchmark: Module against a hand-written numpy step of the same network; prints JSON.

One step = forward, backward and an SGD update (momentum 0.9, weight decay 1e-4,
rescale 1/batch) on random data, for

* an MLP 784-512-512-10 (relu, softmax) at batch 128,
* LeNet (conv 20 5x5, relu, max pool, conv 50 5x5, relu, max pool, fc 500, relu, fc 10) at batch 64, 28x28.

Module is timed two ways: ``sync`` waits for the updated weights after every step (what a
loop reading its metric each batch sees), ``pipelined`` pushes ``--steps`` steps and waits
once. numpy runs with BLAS on every core (the engine's GEMMs run on its own BLAS instance,
mxasync.backends.numpy.blas, and leave numpy's alone). The first step of both is compared (max relative
difference of the updated weights) so the two really compute the same thing.
The Module figures with ``--contexts 2`` split each batch over cpu(0) and cpu(1) (data parallel).

Peers: MXNet 1.9.1 (``--mxnet PY``, default /work/mxref/bin/python) and PyTorch (``--torch PY``,
default /work/venvs/torch/bin/python) run the same step (``train_peers.py``) in a subprocess
when their Python exists. ``--rounds`` alternates all of them (mxasync, numpy, MXNet, PyTorch)
round after round, so every figure comes from the same machine state; the summary gives the
median and range over rounds and mxasync's ratio to each peer, and ``cpu_ms_per_step`` the CPU
time of each per step (all its threads: what the step costs, whatever else the machine runs).

Usage: ``python benchmarks/train.py [--steps 30] [--repeat 5] [--rounds 3]``
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
from threadpoolctl import threadpool_limits

import mxasync as mx
from mxasync import initializer
from mxasync.module import Module
from mxasync.train.networks import lenet

LR, MOMENTUM, WD = 0.05, 0.9, 1e-4


def mlp_sym():
    h = mx.sym.Variable("data")
    for i, n in enumerate((512, 512), start=1):
        h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{i}"), act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")


# -- numpy: the same steps, written out -------------------------------------------------------
def _softmax_grad(z, label):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    g = e / e.sum(axis=1, keepdims=True)
    g[np.arange(len(z)), label] -= 1.0  # SoftmaxOutput's gradient (normalization 'null')
    return g


def _fc_back(g, x, w):
    return g.T @ x, g.sum(axis=0), g @ w


def mlp_grads(x, label, p):
    h1 = np.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    h2 = np.maximum(h1 @ p["fc2_weight"].T + p["fc2_bias"], 0)
    g = _softmax_grad(h2 @ p["fc3_weight"].T + p["fc3_bias"], label)
    out = {}
    out["fc3_weight"], out["fc3_bias"], g = _fc_back(g, h2, p["fc3_weight"])
    out["fc2_weight"], out["fc2_bias"], g = _fc_back(g * (h2 > 0), h1, p["fc2_weight"])
    out["fc1_weight"], out["fc1_bias"], _ = _fc_back(g * (h1 > 0), x, p["fc1_weight"])
    return out


def _im2col(x, k):
    cols = sliding_window_view(x, (k, k), axis=(2, 3))  # n, c, oh, ow, k, k
    n, c, oh, ow = cols.shape[:4]
    return np.ascontiguousarray(cols.transpose(0, 2, 3, 1, 4, 5)).reshape(n * oh * ow, c * k * k), (n, oh, ow)


def _conv(x, w, b):
    cols, (n, oh, ow) = _im2col(x, w.shape[2])
    return (cols @ w.reshape(w.shape[0], -1).T + b).reshape(n, oh, ow, -1).transpose(0, 3, 1, 2), cols


def _conv_back(g, cols, w, need_dx):
    f, c, k = w.shape[:3]
    g2 = g.transpose(0, 2, 3, 1).reshape(-1, f)
    gw, gb = (g2.T @ cols).reshape(w.shape), g2.sum(axis=0)
    if not need_dx:
        return None, gw, gb
    gcols, (n, oh, ow) = _im2col(np.pad(g, ((0, 0), (0, 0), (k - 1, k - 1), (k - 1, k - 1))), k)
    flipped = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3).reshape(c, -1)  # full correlation with the flipped kernel
    return (gcols @ flipped.T).reshape(n, oh, ow, c).transpose(0, 3, 1, 2), gw, gb


def _pool(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = win.max(axis=(3, 5))
    return out, win == out[:, :, :, None, :, None]


def _pool_back(g, mask):
    return (mask * g[:, :, :, None, :, None]).reshape(mask.shape[0], mask.shape[1], mask.shape[2] * 2, -1)


def lenet_grads(x, label, p):
    c1, cols1 = _conv(x, p["conv1_weight"], p["conv1_bias"])
    p1, m1 = _pool(np.maximum(c1, 0))
    c2, cols2 = _conv(p1, p["conv2_weight"], p["conv2_bias"])
    p2, m2 = _pool(np.maximum(c2, 0))
    f = p2.reshape(len(x), -1)
    h = np.maximum(f @ p["fc1_weight"].T + p["fc1_bias"], 0)
    g = _softmax_grad(h @ p["fc2_weight"].T + p["fc2_bias"], label)
    out = {}
    out["fc2_weight"], out["fc2_bias"], g = _fc_back(g, h, p["fc2_weight"])
    out["fc1_weight"], out["fc1_bias"], g = _fc_back(g * (h > 0), f, p["fc1_weight"])
    g = _pool_back(g.reshape(p2.shape), m2) * (c2 > 0)
    g, out["conv2_weight"], out["conv2_bias"] = _conv_back(g, cols2, p["conv2_weight"], need_dx=True)
    g = _pool_back(g, m1) * (c1 > 0)
    _, out["conv1_weight"], out["conv1_bias"] = _conv_back(g, cols1, p["conv1_weight"], need_dx=False)
    return out


def numpy_step(grads_fn, x, label, params, moms, batch):
    grads = grads_fn(x, label, params)
    for name, g in grads.items():
        wd = WD if name.endswith("_weight") else 0.0  # MXNet: no weight decay on biases once names are known
        m = moms[name]
        m *= MOMENTUM
        m -= LR * (g / batch + wd * params[name])
        params[name] += m


# -- the benchmark -------------------------------------------------------------------------------
def bench(name, sym, data_shape, batch, steps, repeat, contexts=1) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(data_shape).astype(np.float32)
    label = rng.integers(0, 10, batch)
    mod = Module(sym, context=[mx.cpu(i) for i in range(contexts)])
    mod.bind(data_shapes=[("data", data_shape)], label_shapes=[("softmax_label", (batch,))])
    mod.init_params(initializer.Xavier())
    params = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    initial = {k: v.copy() for k, v in params.items()}
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    moms = {k: np.zeros_like(v) for k, v in params.items()}
    data_batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(label.astype(np.float32))])
    weights = [w for block in mod._exec_group.param_arrays for w in block]
    grads_fn = mlp_grads if name == "mlp" else lenet_grads

    def module_step():
        mod.forward_backward(data_batch)
        mod.update()

    def wait():
        for w in weights:
            w.wait_to_read()

    module_step()
    wait()
    with threadpool_limits(limits=os.cpu_count()):
        numpy_step(grads_fn, x, label, params, moms, batch)
    got = mod.get_params()[0]
    # compare the updates themselves (new - initial weights), not the weights they barely move
    diff = max(float(np.abs((got[k].asnumpy() - initial[k]) - (v - initial[k])).max()
                     / (np.abs(v - initial[k]).max() + 1e-12)) for k, v in params.items())

    cpu: dict[str, float] = {}

    def timed(fn) -> float:
        best, used = [], []
        for _ in range(repeat):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            best.append((time.perf_counter() - t0) / steps)
            used.append((time.process_time() - c0) / steps)
        cpu[fn.__name__] = round(float(np.median(used)) * 1e3, 3)
        return float(np.median(best))

    def sync():
        for _ in range(steps):
            module_step()
            wait()

    def pipelined():
        for _ in range(steps):
            module_step()
        wait()

    def plain():
        with threadpool_limits(limits=os.cpu_count()):
            for _ in range(steps):
                numpy_step(grads_fn, x, label, params, moms, batch)

    t = {"module_sync": timed(sync), "module_pipelined": timed(pipelined), "numpy": timed(plain)}
    return {"batch": batch, "images_per_s": {k: round(batch / v, 1) for k, v in t.items()},
            "cpu_ms_per_step": {"module_sync": cpu["sync"], "module_pipelined": cpu["pipelined"], "numpy": cpu["plain"]},
            "step_ms": {k: round(v * 1e3, 3) for k, v in t.items()},
            "module_over_numpy_speed": round(t["numpy"] / t["module_sync"], 3),
            "first_update_max_rel_diff": diff}


def peer(python: str, which: str, steps: int, threads: int = 0) -> dict:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_peers.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    if threads:  # MXNet and PyTorch both size their OpenMP pools from this
        env["OMP_NUM_THREADS"] = str(threads)
    out = subprocess.run([python, script, which, "--steps", str(steps)], capture_output=True, text=True,
                         timeout=900, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(values: list[float]) -> dict:
    return {"median": round(float(np.median(values)), 1), "min": round(min(values), 1),
            "max": round(max(values), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="alternations of mxasync, numpy and the peers")
    ap.add_argument("--contexts", type=int, default=1, help="Module contexts (cpu(0)..cpu(n-1), data parallel)")
    ap.add_argument("--mxnet", default="/work/mxref/bin/python", help="a Python with MXNet 1.9.1 ('' to skip)")
    ap.add_argument("--torch", default="/work/venvs/torch/bin/python", help="a Python with PyTorch ('' to skip)")
    ap.add_argument("--peer-threads", type=int, default=0, help="OMP_NUM_THREADS for the peers (0: their default)")
    args = ap.parse_args()
    mx.random.seed(0)
    peers = {k: v for k, v in (("mxnet", args.mxnet), ("pytorch", args.torch)) if v and os.path.exists(v)}
    rounds: dict[str, dict[str, list[float]]] = {"mlp": {}, "lenet": {}}
    cpu_rounds: dict[str, dict[str, list[float]]] = {"mlp": {}, "lenet": {}}
    last = {}
    for _ in range(args.rounds):
        last = {
            "mlp": bench("mlp", mlp_sym(), (128, 784), 128, args.steps, args.repeat, args.contexts),
            "lenet": bench("lenet", lenet(), (64, 1, 28, 28), 64, args.steps, args.repeat, args.contexts),
        }
        for net, res in last.items():
            for k, v in res["images_per_s"].items():
                rounds[net].setdefault(k, []).append(v)
            for k, v in res["cpu_ms_per_step"].items():
                cpu_rounds[net].setdefault(k, []).append(v)
        for name, python in peers.items():
            try:
                got = peer(python, "mxnet" if name == "mxnet" else "torch", args.steps, args.peer_threads)
            except (subprocess.SubprocessError, ValueError, OSError) as exc:
                print(f"train.py: {name} failed: {exc}", file=sys.stderr)
                continue
            for net in ("mlp", "lenet"):
                rounds[net].setdefault(name, []).append(got[net])
                if net in got.get("cpu_ms", {}):
                    cpu_rounds[net].setdefault(name, []).append(got["cpu_ms"][net])
    summary = {}
    for net, per in rounds.items():
        row = {k: _summary(v) for k, v in per.items()}
        ours = row["module_sync"]["median"]
        for name in list(peers) + ["numpy"]:
            if name in row:
                row[f"module_sync_over_{name}"] = round(ours / row[name]["median"], 3)
        summary[net] = row
    result = {
        "images_per_s": summary,
        # CPU time per step (all threads): what the work costs, whatever else the machine runs
        "cpu_ms_per_step": {net: {k: _summary(v)["median"] for k, v in per.items()} for net, per in cpu_rounds.items()},
        "last_round": last,
        "rounds": args.rounds,
        "module_contexts": args.contexts,
        "cpu_count": os.cpu_count(),
        "peer_threads": args.peer_threads or "default",
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
