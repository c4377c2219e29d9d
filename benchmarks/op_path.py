"""The op path, before and after a change, in the same run: prints one JSON object.

    python benchmarks/op_path.py --tree before=/path/to/old/checkout --tree after=. [--rounds 3]

Each workload runs in a fresh interpreter per tree (``PYTHONPATH`` set to the tree), the trees
alternating round by round; per workload and tree the median over the rounds of the best of a
few repeats, as CPU time (the figure that holds on a shared machine) and wall time:

* ``tiny_add``: ``c = a + b`` on 4-element arrays (the per-op budget; µs per op);
* ``tiny_relu``: ``mx.nd.relu(a)`` through the generic call path (µs per op);
* ``mlp_gluon``: a hybridized 784-128-64-10 MLP, batch 64, record + backward + SGD step (ms per step);
* ``mlp_imperative``: the same not hybridized (every op on the tape; ms per step);
* ``lenet_module``: LeNet through ``Module`` (forward_backward + update, batch 32; ms per step);
* ``lstm_lm``: a 2-layer fused LSTM language model, T=16, batch 16, 128 units, forward+backward (ms per step);
* ``resnet18``: model-zoo ResNet-18 v1, hybridized, batch 4 of 3x32x32, training step (ms per step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKLOADS = ["tiny_add", "tiny_relu", "mlp_gluon", "mlp_imperative", "lenet_module", "lstm_lm", "resnet18"]


def _measure(fn, n: int, repeat: int = 3) -> dict:
    """Best of ``repeat`` runs of ``fn()`` (which does ``n`` units of work), per unit."""
    fn()  # warm-up: plans, kernels, pools
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c0) / n)
        wall.append((time.perf_counter() - w0) / n)
    return {"cpu": min(cpu), "wall": min(wall)}


def _workload(name: str) -> dict:
    import numpy as np

    import mxasync as mx
    from mxasync import autograd, gluon

    mx.random.seed(0)
    if name in ("tiny_add", "tiny_relu"):
        a, b = mx.nd.ones((4,)), mx.nd.ones((4,))
        n = 20000

        def run():
            for _ in range(n):
                c = a + b if name == "tiny_add" else mx.nd.relu(a)  # noqa: F841
            mx.nd.waitall()

        r = _measure(run, n)
        return {"unit": "us/op", "cpu": r["cpu"] * 1e6, "wall": r["wall"] * 1e6}
    if name in ("mlp_gluon", "mlp_imperative"):
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(128, activation="relu"), gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(10))
        net.initialize(mx.init.Xavier())
        if name == "mlp_gluon":
            net.hybridize()
        x, y = mx.nd.array(np.random.rand(64, 784)), mx.nd.array(np.random.randint(0, 10, 64))
        step = _gluon_step(net, x, y, mx, autograd, gluon)
    elif name == "lstm_lm":
        net = _LM(mx, gluon)
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(np.random.randint(0, 1000, (16, 16)))
        y = mx.nd.array(np.random.randint(0, 1000, (16, 16)))
        step = _gluon_step(net, x, y, mx, autograd, gluon)
    elif name == "resnet18":
        net = gluon.model_zoo.vision.resnet18_v1(classes=10)
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x, y = mx.nd.array(np.random.rand(4, 3, 32, 32)), mx.nd.array(np.random.randint(0, 10, 4))
        step = _gluon_step(net, x, y, mx, autograd, gluon)
    elif name == "lenet_module":
        step = _lenet_module(mx, np)
    else:
        raise SystemExit(f"unknown workload {name!r}")
    n = 10

    def run():
        for _ in range(n):
            step()
        mx.nd.waitall()

    r = _measure(run, n)
    return {"unit": "ms/step", "cpu": r["cpu"] * 1e3, "wall": r["wall"] * 1e3}


def _gluon_step(net, x, y, mx, autograd, gluon):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])

    return step


def _LM(mx, gluon):  # noqa: N802 - a class factory
    class LM(gluon.Block):
        def __init__(self):
            super().__init__()
            self.embed = gluon.nn.Embedding(1000, 128)
            self.rnn = gluon.rnn.LSTM(128, num_layers=2, layout="NTC")
            self.out = gluon.nn.Dense(1000, flatten=False)

        def forward(self, x):
            return self.out(self.rnn(self.embed(x)))

    return LM()


def _lenet_module(mx, np):
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.Convolution(data, kernel=(5, 5), num_filter=20), act_type="tanh")
    h = mx.sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = mx.sym.Activation(mx.sym.Convolution(h, kernel=(5, 5), num_filter=50), act_type="tanh")
    h = mx.sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=500), act_type="tanh")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10), name="softmax")
    mod = mx.mod.Module(out, context=mx.cpu())
    mod.bind(data_shapes=[("data", (32, 1, 28, 28))], label_shapes=[("softmax_label", (32,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01})
    batch = mx.io.DataBatch([mx.nd.array(np.random.rand(32, 1, 28, 28))],
                            [mx.nd.array(np.random.randint(0, 10, 32))])

    def step():
        mod.forward_backward(batch)
        mod.update()

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (repeat; the order alternates)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--run", default="", help=argparse.SUPPRESS)  # internal: one workload in this interpreter
    args = ap.parse_args()
    if args.run:
        print(json.dumps(_workload(args.run)))
        return
    trees = [t.split("=", 1) for t in args.tree] or [["this", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]]
    names = args.only.split(",") if args.only else WORKLOADS
    got: dict = {n: {t: [] for t, _ in trees} for n in names}
    for r in range(args.rounds):
        for n in names:
            order = trees if r % 2 == 0 else trees[::-1]
            for tname, path in order:
                env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--run", n], env=env,
                                     capture_output=True, text=True, check=True, timeout=900)
                got[n][tname].append(json.loads(out.stdout.strip().splitlines()[-1]))
    result = {"machine": f"{os.cpu_count()} cores", "rounds": args.rounds, "workloads": {}}
    for n in names:
        row = {}
        for tname, _ in trees:
            runs = got[n][tname]
            row[tname] = {"unit": runs[0]["unit"], "cpu": statistics.median(x["cpu"] for x in runs),
                          "wall": statistics.median(x["wall"] for x in runs)}
        if len(trees) == 2:
            a, b = trees[0][0], trees[1][0]
            row[f"cpu_{b}_over_{a}"] = row[b]["cpu"] / row[a]["cpu"]
        result["workloads"][n] = row
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
