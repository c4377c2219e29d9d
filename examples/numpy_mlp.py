"""An MLP written in MXNet's NumPy-interface style (d2l's "from scratch" chapter), on the bundled digits.

Parameters are plain ``mx.np`` arrays with ``attach_grad()``; the forward runs under
``autograd.record()`` and the update is written with ``mx.np`` operators. The same script runs
on MXNet 1.9.1 (``--framework mxnet`` with MXNet's interpreter), from the same initial weights
(drawn with NumPy from one seed), so the two accuracies can be compared:

    python examples/numpy_mlp.py                                   # mxasync
    /work/venvs/mx191/bin/python examples/numpy_mlp.py --framework mxnet
"""

from __future__ import annotations

import argparse
import importlib
import os
import time

import numpy as onp

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "mxasync", "io", "data", "digits.npz")


def load(seed: int = 0, sample_shape: tuple = (-1,)):
    """Digits as float32 in [0, 1] (each sample of ``sample_shape``), split 80/20 with a fixed permutation."""
    with onp.load(DIGITS) as f:
        images, labels = f[f.files[0]], f[f.files[1]]
    x = images.reshape(len(images), *sample_shape).astype("float32") / 16.0
    y = labels.astype("int64")
    order = onp.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def arguments(doc: str, **defaults) -> argparse.Namespace:
    """The examples' shared command line (``defaults`` adds an example's own integer options)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--framework", choices=["mxasync", "mxnet"], default="mxasync")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.2)
    for name, value in defaults.items():
        parser.add_argument("--" + name, type=int, default=value)
    return parser.parse_args()


def start(args, shapes):
    """The framework's module with NumPy semantics on, and parameters of ``shapes`` drawn from one seed."""
    mx = importlib.import_module(args.framework)
    mx.npx.set_np()
    rng = onp.random.default_rng(42)  # the same start on both frameworks
    params = [mx.np.array(rng.normal(0, 0.1, s).astype("float32")) for s in shapes]
    for p in params:
        p.attach_grad()
    return mx, params


def fit(mx, args, params, net, data) -> None:
    """Minibatch SGD on softmax cross-entropy, written with ``mx.np``; prints loss and test accuracy."""
    np, npx, autograd = mx.np, mx.npx, mx.autograd
    xtr, ytr, xte, yte = data

    def loss_fn(logits, y):  # softmax cross-entropy, written with mx.np
        return -npx.pick(npx.log_softmax(logits), y).mean()

    start_time = time.perf_counter()
    n = len(xtr)
    for epoch in range(args.epochs):
        total = 0.0
        for i in range(0, n, args.batch_size):
            xb, yb = np.array(xtr[i:i + args.batch_size]), np.array(ytr[i:i + args.batch_size], dtype="int64")
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            for p in params:
                p[:] = p - args.lr * p.grad
            total += float(loss.item()) * len(xb)
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            pred = net(np.array(xte)).argmax(axis=1).asnumpy()
            print(f"epoch {epoch + 1:2d}  loss {total / n:.4f}  test accuracy {(pred == yte).mean():.4f}")
    print(f"{args.framework}: {time.perf_counter() - start_time:.1f} s")


def main() -> None:
    args = arguments(__doc__, hidden=64)
    mx, params = start(args, [(64, args.hidden), (args.hidden,), (args.hidden, 10), (10,)])
    np, npx = mx.np, mx.npx

    def net(x):
        w1, b1, w2, b2 = params
        h = npx.relu(np.dot(x, w1) + b1)
        return np.dot(h, w2) + b2

    fit(mx, args, params, net, load())


if __name__ == "__main__":
    main()
