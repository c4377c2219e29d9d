"""Gluon training-step benchmark: HybridBlocks imperative and hybridized against Module and numpy; prints JSON.

The networks and the step are those of ``benchmarks/train.py`` (MLP 784-512-512-10 at batch
128, LeNet at batch 64; SGD momentum 0.9, wd 1e-4, rescale 1/batch), written as Gluon
HybridBlocks with a softmax cross-entropy loss block:

    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch)

``gluon`` runs the blocks imperatively (one engine op per layer call), ``gluon_hybrid``
hybridized (each block one cached graph on the Executor, one autograd node). Every figure
waits for the updated weights after each step (``sync``, as train.py's ``module_sync``); the
variants are timed interleaved and the best of ``--repeat`` rounds counts.
All variants start from the same weights and their first updates are compared with numpy's.

Usage: ``python benchmarks/gluon.py [--steps 30] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import mxasync as mx
from mxasync import autograd, gluon, initializer
from mxasync.module import Module
from mxasync.train.networks import lenet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as _train  # noqa: E402  (the same networks and numpy step)

LR, MOMENTUM, WD = _train.LR, _train.MOMENTUM, _train.WD


class MLP(gluon.HybridBlock):
    """784-512-512-10 with relu; parameters named as the Module version's (fc1_weight, ...)."""

    def __init__(self):
        super().__init__(prefix="")
        self._hidden = (512, 512, 10)
        for i, (n, k) in enumerate(zip(self._hidden, (784, 512, 512), strict=True), start=1):
            setattr(self, f"fc{i}_weight", self.params.get(f"fc{i}_weight", shape=(n, k)))
            setattr(self, f"fc{i}_bias", self.params.get(f"fc{i}_bias", shape=(n,), wd_mult=0.0))

    def hybrid_forward(self, F, x, **p):
        h = x
        for i, n in enumerate(self._hidden, start=1):
            h = F.FullyConnected(h, p[f"fc{i}_weight"], p[f"fc{i}_bias"], num_hidden=n)
            if i < len(self._hidden):
                h = F.Activation(h, act_type="relu")
        return h


class LeNet(gluon.HybridBlock):
    """conv 20 5x5, relu, max pool, conv 50 5x5, relu, max pool, fc 500, relu, fc 10 (Module's names)."""

    def __init__(self):
        super().__init__(prefix="")
        shapes = {"conv1_weight": (20, 1, 5, 5), "conv1_bias": (20,), "conv2_weight": (50, 20, 5, 5),
                  "conv2_bias": (50,), "fc1_weight": (500, 800), "fc1_bias": (500,), "fc2_weight": (10, 500),
                  "fc2_bias": (10,)}
        for name, shape in shapes.items():  # no weight decay on biases, as Module (by their names)
            setattr(self, name, self.params.get(name, shape=shape, wd_mult=1.0 if name.endswith("weight") else 0.0))

    def hybrid_forward(self, F, x, **p):
        h = x
        for i, n in ((1, 20), (2, 50)):
            h = F.Convolution(h, p[f"conv{i}_weight"], p[f"conv{i}_bias"], kernel=(5, 5), num_filter=n)
            h = F.Pooling(F.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = F.FullyConnected(F.Flatten(h), p["fc1_weight"], p["fc1_bias"], num_hidden=500)
        return F.FullyConnected(F.Activation(h, act_type="relu"), p["fc2_weight"], p["fc2_bias"], num_hidden=10)


class SoftmaxCE(gluon.HybridBlock):
    """Per-sample softmax cross-entropy (gluon.loss.SoftmaxCrossEntropyLoss's value and gradient)."""

    def hybrid_forward(self, F, pred, label):
        return -F.pick(F.log_softmax(pred, axis=-1), label, axis=-1)


def _loss_block():
    loss_mod = getattr(gluon, "loss", None)
    return loss_mod.SoftmaxCrossEntropyLoss() if loss_mod is not None else SoftmaxCE()


def bench(name, data_shape, batch, steps, repeat) -> dict:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(data_shape).astype(np.float32)
    label_np = rng.integers(0, 10, batch)
    sym = _train.mlp_sym() if name == "mlp" else lenet()
    mod = Module(sym, context=mx.cpu())
    mod.bind(data_shapes=[("data", data_shape)], label_shapes=[("softmax_label", (batch,))])
    mod.init_params(initializer.Xavier())
    initial = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
    x, y = mx.nd.array(x_np), mx.nd.array(label_np.astype(np.float32))
    data_batch = mx.io.DataBatch([x], [y])
    mod_weights = [w for block in mod._exec_group.param_arrays for w in block]

    def module_step():
        mod.forward_backward(data_batch)
        mod.update()
        for w in mod_weights:
            w.wait_to_read()

    params = {k: v.copy() for k, v in initial.items()}
    moms = {k: np.zeros_like(v) for k, v in params.items()}
    grads_fn = _train.mlp_grads if name == "mlp" else _train.lenet_grads

    def numpy_step():
        with threadpool_limits(limits=os.cpu_count()):
            _train.numpy_step(grads_fn, x_np, label_np, params, moms, batch)

    def gluon_setup(hybrid):
        net = MLP() if name == "mlp" else LeNet()
        net.initialize(ctx=mx.cpu())
        for k, p in net.collect_params().items():
            p.set_data(mx.nd.array(initial[k]))
        loss_fn = _loss_block()
        net.hybridize(hybrid)
        loss_fn.hybridize(hybrid)
        trainer = gluon.Trainer(net.collect_params(), "sgd",
                                {"learning_rate": LR, "momentum": MOMENTUM, "wd": WD})
        weights = [p.data() for p in net.collect_params().values()]

        def step():
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch)
            for w in weights:
                w.wait_to_read()

        return net, step

    steps_fns = {"module": module_step, "numpy": numpy_step}
    first = {}
    for variant, hybrid in (("gluon", False), ("gluon_hybrid", True)):
        net, step = gluon_setup(hybrid)
        step()
        first[variant] = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
        steps_fns[variant] = step
    module_step()
    first["module"] = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    numpy_step()
    ref = params

    def rel_diff(got):
        return max(float(np.abs((got[k] - initial[k]) - (ref[k] - initial[k])).max()
                         / (np.abs(ref[k] - initial[k]).max() + 1e-12)) for k in ref)

    diffs = {k: rel_diff(v) for k, v in first.items()}

    # interleaved: each repeat times every variant once, so drifting load on a shared machine
    # hits them alike; the best repeat of each counts
    runs: dict = {k: [] for k in steps_fns}
    for _ in range(repeat):
        for k, fn in steps_fns.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                fn()
            runs[k].append((time.perf_counter() - t0) / steps)
    t = {k: float(min(v)) for k, v in runs.items()}
    return {"batch": batch, "images_per_s": {k: round(batch / v, 1) for k, v in t.items()},
            "step_ms": {k: round(v * 1e3, 3) for k, v in t.items()},
            "gluon_hybrid_over_module_speed": round(t["module"] / t["gluon_hybrid"], 3),
            "gluon_over_module_speed": round(t["module"] / t["gluon"], 3),
            "first_update_max_rel_diff_vs_numpy": diffs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nets", default="mlp,lenet")
    args = ap.parse_args()
    mx.random.seed(0)
    result = {}
    nets = args.nets.split(",")
    if "mlp" in nets:
        result["mlp_784_512_512_10"] = bench("mlp", (128, 784), 128, args.steps, args.repeat)
    if "lenet" in nets:
        result["lenet_28x28"] = bench("lenet", (64, 1, 28, 28), 64, args.steps, args.repeat)
    result["cpu_count"] = os.cpu_count()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
