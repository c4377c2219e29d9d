"""GPU benchmark (issue 21): mxasync on gpu(0) against PyTorch on the same GPU; prints JSON.

Workloads, each a training step (forward, backward, SGD momentum 0.9, wd 1e-4) on random
data, waiting for the updated weights after every step:

* ``tiny``: one ``c = a + b`` on 4 floats, pushed N times, then one wait (µs per op);
* ``mlp`` (784-512-512-10, batch 128) and ``lenet`` (batch 64, 28x28) through Module;
* ``resnet18`` / ``resnet50`` (v1, batch 32, 3x224x224, 1000 classes) as a hybridized
  Gluon block with ``gluon.Trainer`` (``*_gluon``) and through Module (``*_module``).

Each mxasync figure is taken with CUDA graphs on and off (``MXNET_ENABLE_CUDA_GRAPHS``
1 / 0; until CUDA-graph capture lands, both take the eager path), each run in a fresh process
so peak memory is its own; PyTorch (eager, fp32,
cuDNN benchmark mode off, its default) runs the same networks in a process of its own
when ``torch`` imports. Rounds alternate every runner, so all see the same GPU state; the
summary gives medians over rounds, img/s (µs per op for ``tiny``), peak device memory
(mxasync: the engine's storage peak; PyTorch: ``torch.cuda.max_memory_allocated``) and
the ratio to PyTorch.

Usage: ``python benchmarks/gpu.py [--rounds 3] [--steps 20] [--only mlp,lenet] [--ctx cpu]``
(``--ctx cpu`` is a dry run of the same code on the CPU, with small steps, for CI-less checks).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = ("tiny", "mlp", "lenet", "resnet18_gluon", "resnet18_module", "resnet50_gluon", "resnet50_module")
BATCH = {"mlp": 128, "lenet": 64, "resnet18": 32, "resnet50": 32}
LR, MOMENTUM, WD = 0.05, 0.9, 1e-4
TINY_OPS = 5000


def _shape(net: str, batch: int) -> tuple[int, ...]:
    return {"mlp": (batch, 784), "lenet": (batch, 1, 28, 28)}.get(net, (batch, 3, 224, 224))


def _classes(net: str) -> int:
    return 1000 if net.startswith("resnet") else 10


def _time_steps(step, sync, steps: int) -> float:
    """Seconds per step (two warm-up steps: first touch, plans, captures)."""
    for _ in range(2):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
        sync()
    return (time.perf_counter() - t0) / steps


# -- mxasync ------------------------------------------------------------------------------------
def _mx_symbol(mx, net: str):
    if net == "mlp":
        h = mx.sym.Variable("data")
        for i, n in enumerate((512, 512), start=1):
            h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{i}"), act_type="relu")
        return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")
    if net == "lenet":
        from mxasync.train.networks import lenet

        return lenet()
    block = _mx_block(mx, net)
    return mx.sym.SoftmaxOutput(block(mx.sym.var("data")), name="softmax")


def _mx_block(mx, net: str):
    from mxasync.gluon.model_zoo import vision

    return getattr(vision, f"{net}_v1")(classes=_classes(net))


def mx_run(workload: str, ctx_name: str, steps: int) -> dict:
    import numpy as np

    import mxasync as mx
    from mxasync.runtime.storage import Storage

    ctx = mx.gpu(0) if ctx_name == "gpu" else mx.cpu(0)
    rng = np.random.default_rng(0)
    if workload == "tiny":
        a, b = mx.nd.ones((4,), ctx=ctx), mx.nd.ones((4,), ctx=ctx)
        for _ in range(100):
            a + b
        mx.nd.waitall()
        t0 = time.perf_counter()
        for _ in range(TINY_OPS):
            c = a + b
        c.wait_to_read()
        return {"us_per_op": (time.perf_counter() - t0) / TINY_OPS * 1e6}
    net, _, face = workload.partition("_")
    batch = BATCH[net] if ctx_name == "gpu" else max(2, BATCH[net] // 16)
    x = mx.nd.array(rng.standard_normal(_shape(net, batch)).astype(np.float32), ctx=ctx)
    y = mx.nd.array(rng.integers(0, _classes(net), batch).astype(np.float32), ctx=ctx)
    opt = {"learning_rate": LR, "momentum": MOMENTUM, "wd": WD}
    if face == "gluon":
        from mxasync import autograd, gluon

        block = _mx_block(mx, net)
        block.initialize(mx.init.Xavier(), ctx=ctx)
        block.hybridize(static_alloc=True, static_shape=True)
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(block.collect_params(), "sgd", opt)
        block(x)
        weights = [p.data(ctx) for p in block.collect_params().values()]

        def step():
            with autograd.record():
                loss = loss_fn(block(x), y)
            loss.backward()
            trainer.step(batch)
    else:
        from mxasync.module import Module

        mod = Module(_mx_symbol(mx, net), context=ctx)
        mod.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", (batch,))])
        mod.init_params(mx.init.Xavier())
        mod.init_optimizer(optimizer="sgd", optimizer_params=opt)
        data_batch = mx.io.DataBatch([x], [y])
        weights = [w for group in mod._exec_group.param_arrays for w in group]

        def step():
            mod.forward_backward(data_batch)
            mod.update()

    def sync():
        for w in weights:
            w.wait_to_read()

    seconds = _time_steps(step, sync, steps)
    return {"images_per_s": batch / seconds, "step_ms": seconds * 1e3, "batch": batch,
            "peak_device_bytes": Storage.get(ctx).stats()["peak"]}


# -- PyTorch ------------------------------------------------------------------------------------
def _torch_net(torch, nn, net: str):
    if net == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    if net == "lenet":
        return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                             nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
    import torchvision  # ResNets from torchvision; skipped (reported) without it

    return getattr(torchvision.models, net)(num_classes=_classes(net))


def torch_run(workload: str, ctx_name: str, steps: int) -> dict:
    import torch
    from torch import nn

    dev = torch.device("cuda:0" if ctx_name == "gpu" else "cpu")
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    if workload == "tiny":
        a, b = torch.ones(4, device=dev), torch.ones(4, device=dev)
        for _ in range(100):
            a + b
        sync()
        t0 = time.perf_counter()
        for _ in range(TINY_OPS):
            a + b
        sync()
        return {"us_per_op": (time.perf_counter() - t0) / TINY_OPS * 1e6}
    net = workload.partition("_")[0]
    batch = BATCH[net] if ctx_name == "gpu" else max(2, BATCH[net] // 16)
    torch.manual_seed(0)
    model = _torch_net(torch, nn, net).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD)
    x = torch.randn(*_shape(net, batch), device=dev)
    y = torch.randint(0, _classes(net), (batch,), device=dev)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    seconds = _time_steps(step, sync, steps)
    peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else None
    return {"images_per_s": batch / seconds, "step_ms": seconds * 1e3, "batch": batch, "peak_device_bytes": peak}


# -- driver -------------------------------------------------------------------------------------
def _child(runner: str, workload: str, ctx: str, steps: int, graphs: str | None) -> dict:
    env = dict(os.environ)
    if graphs is not None:
        env["MXNET_ENABLE_CUDA_GRAPHS"] = graphs
    cmd = [sys.executable, os.path.abspath(__file__), "--child", runner, "--only", workload, "--ctx", ctx,
           "--steps", str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict], key: str):
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--ctx", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--child", choices=("mxasync", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    workloads = [w for w in args.only.split(",") if w]
    if args.child:
        run = mx_run if args.child == "mxasync" else torch_run
        print(json.dumps(run(workloads[0], args.ctx, args.steps)))
        return
    try:
        import torch  # noqa: F401

        have_torch = not args.no_torch
    except ImportError:
        have_torch = False
    runners = [("mxasync_graphs_on", "mxasync", "1"), ("mxasync_graphs_off", "mxasync", "0")]
    if have_torch:
        runners.append(("torch_eager", "torch", None))
    results: dict[str, dict[str, list]] = {w: {r[0]: [] for r in runners} for w in workloads}
    for _ in range(args.rounds):
        for w in workloads:
            for label, runner, graphs in runners:
                results[w][label].append(_child(runner, w, args.ctx, args.steps, graphs))
    summary = {}
    for w, by_runner in results.items():
        key = "us_per_op" if w == "tiny" else "images_per_s"
        row = {label: {"median_" + key: _median(runs, key), "peak_device_bytes": _median(runs, "peak_device_bytes"),
                       "errors": sorted({r["error"] for r in runs if "error" in r})}
               for label, runs in by_runner.items()}
        peer = row.get("torch_eager", {}).get("median_" + key)
        for label in ("mxasync_graphs_on", "mxasync_graphs_off"):
            ours = row[label]["median_" + key]
            if peer and ours:
                row[label]["speed_vs_torch"] = round(peer / ours if w == "tiny" else ours / peer, 3)
        summary[w] = row
    print(json.dumps({"ctx": args.ctx, "rounds": args.rounds, "steps": args.steps, "results": summary,
                      "raw": results}, indent=1))


if __name__ == "__main__":
    main()
