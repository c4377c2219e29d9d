"""Automatic mixed precision in a Gluon training loop, as MXNet's ``example/automatic-mixed-precision``:
``amp.init()``, ``amp.init_trainer()``, ``amp.scale_loss()`` around a LeNet on the bundled digits.

Each precision is trained from the same initial weights and data order, and the script prints the
validation accuracies as JSON:

    python examples/amp_lenet.py                        # float32, bfloat16, float16 at 28x28, 8 epochs
    python examples/amp_lenet.py --size 8 --epochs 12   # the 8x8 digits, a few seconds per precision

Parameters stay float32 (the master weights); AMP casts them into the low type at each
FullyConnected / Convolution.  On the numpy backend a low-precision op computes in float32 and rounds
its result (see docs/amp.md), so the comparison checks the numerics of mixed precision, not its speed.
"""

from __future__ import annotations

import argparse
import json
import time

import mxasync as mx
from mxasync import autograd
from mxasync.contrib import amp
from mxasync.gluon import nn
from mxasync.train.data import digits_data


def lenet(size: int) -> nn.HybridSequential:
    """conv 5x5 (3x3 on 8x8 digits) 20 -> max pool -> conv 50 -> max pool -> dense 128 -> dense 10."""
    k = 5 if size >= 20 else 3
    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, kernel_size=k, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(50, kernel_size=k, activation="relu", padding=0 if size >= 20 else 1), nn.MaxPool2D(2, 2),
            nn.Dense(128, activation="relu"), nn.Dense(10))
    return net


def accuracy(net, val) -> float:
    val.reset()
    metric = mx.metric.Accuracy()
    for batch in val:
        n = batch.data[0].shape[0] - (batch.pad or 0)  # the padding of the last batch is not scored
        metric.update([batch.label[0][:n]], [net(batch.data[0]).astype("float32")[:n]])
    return metric.get()[1]


def train(precision: str, epochs: int, size: int, batch_size: int = 64, seed: int = 0, lr: float = 0.1,
          shift: int = 2, network=lenet) -> float:
    """Validation accuracy of a LeNet trained in ``precision`` ('float32', 'float16' or 'bfloat16')."""
    amp.deinit()  # mxasync's addition: each run starts from plain float32 calls
    if precision != "float32":
        amp.init(precision)
    mx.random.seed(seed)
    train_iter, val_iter, _ = digits_data(batch_size, max_shift=shift, seed=seed, size=size)
    net = network(size)
    net.initialize(mx.init.Xavier(magnitude=2.24))
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9})
    if precision != "float32":
        amp.init_trainer(trainer)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(epochs):
        train_iter.reset()
        for batch in train_iter:
            with autograd.record():
                loss = loss_fn(net(batch.data[0]), batch.label[0])
                if precision == "float32":
                    loss.backward()
                else:
                    with amp.scale_loss(loss, trainer) as scaled:
                        autograd.backward(scaled)
            trainer.step(batch.data[0].shape[0])
    result = accuracy(net, val_iter)
    amp.deinit()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--size", type=int, default=28, help="image side (the digits are upsampled from 8x8)")
    parser.add_argument("--precisions", default="float32,bfloat16,float16")
    args = parser.parse_args()
    results = {}
    for precision in args.precisions.split(","):
        wall, cpu = time.perf_counter(), time.process_time()
        acc = train(precision, args.epochs, args.size)
        results[precision] = {"val_accuracy": round(acc, 4), "wall_s": round(time.perf_counter() - wall, 1),
                              "cpu_s": round(time.process_time() - cpu, 1)}
    print(json.dumps({"epochs": args.epochs, "size": args.size, "results": results}, indent=1))


if __name__ == "__main__":
    main()
