"""ResNet-18 training step (batch 8, 3x224x224, 1000 classes): mxasync against PyTorch; prints JSON.

One step = forward, backward and SGD (lr 0.05, momentum 0.9, weight decay 1e-4, the loss
averaged over the batch) on synthetic data. mxasync runs the model zoo's ``resnet18_v1``
hybridized (one cached graph on the Executor) with ``SoftmaxCrossEntropyLoss`` and
``gluon.Trainer``, waiting for the updated weights after every step. PyTorch (``--torch PY``,
default /work/venvs/torch/bin/python, skipped when missing) runs the same network, written
out here (torchvision is not needed), in a subprocess: this very file with ``--peer torch``,
which imports nothing of mxasync. ``--rounds`` alternates the two, round after round, so both
see the same machine state; the summary gives the median (and range) of images/s and of the
CPU time per step (robust to other jobs on a shared machine: compare those when it is loaded).

Usage: ``python benchmarks/resnet.py [--steps 5] [--rounds 3] [--peer-threads N] [--blas-threads N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

BATCH, SHAPE, CLASSES = 8, (3, 224, 224), 1000
LR, MOMENTUM, WD = 0.05, 0.9, 1e-4


def _timed(step, steps: int) -> dict:
    step()  # warm-up: first touch of every buffer, cached graphs
    step()
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(steps):
        step()
    wall, cpu = (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps
    return {"images_per_s": BATCH / wall, "step_ms": wall * 1e3, "cpu_ms_per_step": cpu * 1e3}


# -- mxasync -----------------------------------------------------------------------------------
def mxasync_step():
    import numpy as np

    import mxasync as mx
    from mxasync import autograd, gluon
    from mxasync.gluon.model_zoo import vision

    rng = np.random.default_rng(0)
    net = vision.resnet18_v1(classes=CLASSES)
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    x = mx.nd.array(rng.standard_normal((BATCH,) + SHAPE).astype(np.float32))
    y = mx.nd.array(rng.integers(0, CLASSES, BATCH).astype(np.float32))
    net(x)  # deferred shapes
    weights = [p.data() for p in net.collect_params().values()]

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH)
        for w in weights:
            w.wait_to_read()

    return step


# -- PyTorch (run in its own Python) -----------------------------------------------------------
def torch_step():
    import torch
    from torch import nn

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                                      nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                      nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, CLASSES)]
    model = nn.Sequential(*layers)
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD)
    x = torch.randn(BATCH, *SHAPE)
    y = torch.randint(0, CLASSES, (BATCH,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    return step, torch.get_num_threads()


def run_peer(python: str, steps: int, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    out = subprocess.run([python, os.path.abspath(__file__), "--peer", "torch", "--steps", str(steps)],
                         capture_output=True, text=True, timeout=1800, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(values: list[float]) -> dict:
    values = sorted(values)
    return {"median": round(values[len(values) // 2], 2), "min": round(values[0], 2), "max": round(values[-1], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch", default="/work/venvs/torch/bin/python", help="a Python with PyTorch ('' to skip)")
    ap.add_argument("--peer-threads", type=int, default=0, help="OMP_NUM_THREADS for PyTorch (0: its default)")
    ap.add_argument("--blas-threads", type=int, default=0,
                    help="BLAS threads for mxasync's side, set with threadpoolctl in this process (0: as it is)")
    ap.add_argument("--peer", default="", help=argparse.SUPPRESS)  # internal: run as the PyTorch side
    args = ap.parse_args()
    if args.peer == "torch":
        step, threads = torch_step()
        print(json.dumps({**_timed(step, args.steps), "threads": threads}))
        return
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.blas_threads, user_api="blas")
    step = mxasync_step()
    runs: dict[str, dict[str, list[float]]] = {"mxasync": {}, "pytorch": {}}
    have_torch = bool(args.torch) and os.path.exists(args.torch)
    threads = None
    for _ in range(args.rounds):
        for k, v in _timed(step, args.steps).items():
            runs["mxasync"].setdefault(k, []).append(v)
        if have_torch:
            try:
                got = run_peer(args.torch, args.steps, args.peer_threads)
            except (subprocess.SubprocessError, ValueError, OSError) as exc:
                print(f"resnet.py: pytorch failed: {exc}", file=sys.stderr)
                continue
            threads = got.pop("threads")
            for k, v in got.items():
                runs["pytorch"].setdefault(k, []).append(v)
    summary = {name: {k: _summary(v) for k, v in per.items()} for name, per in runs.items() if per}
    if "pytorch" in summary:
        ours, theirs = summary["mxasync"], summary["pytorch"]
        summary["mxasync_over_pytorch_speed"] = round(ours["images_per_s"]["median"]
                                                      / theirs["images_per_s"]["median"], 3)
        summary["mxasync_over_pytorch_cpu_per_step"] = round(ours["cpu_ms_per_step"]["median"]
                                                             / theirs["cpu_ms_per_step"]["median"], 3)
    print(json.dumps({"net": "resnet18_v1", "batch": BATCH, "input": SHAPE, "classes": CLASSES,
                      "steps": args.steps, "rounds": args.rounds, "results": summary,
                      "pytorch_threads": threads, "mxasync_blas_threads": args.blas_threads or "default",
                      "cpu_count": os.cpu_count(),
                      "load_average": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
