"""A CNN written in MXNet's NumPy-interface style (d2l's LeNet chapter, scaled down), on the bundled digits.

Parameters are plain ``mx.np`` arrays with ``attach_grad()``; the forward runs under
``autograd.record()`` and the update is written with ``mx.np`` operators. The same script runs
on MXNet 1.9.1 (``--framework mxnet`` with MXNet's interpreter), from the same initial weights
(drawn with NumPy from one seed), so the two accuracies can be compared:

    python examples/numpy_cnn.py                                   # mxasync
    /work/venvs/mx191/bin/python examples/numpy_cnn.py --framework mxnet

The net: a 3x3 convolution (8 filters, pad 1), relu, 2x2 max pooling, a dense layer to 10
classes; on the 8x8 digits.
"""

from __future__ import annotations

import argparse
import importlib
import os
import time

import numpy as onp

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "mxasync", "io", "data", "digits.npz")


def load(seed: int = 0):
    """Digits as float32 rows in [0, 1], split 80/20 with a fixed permutation."""
    with onp.load(DIGITS) as f:
        images, labels = f[f.files[0]], f[f.files[1]]
    x = images.reshape(len(images), 1, 8, 8).astype("float32") / 16.0
    y = labels.astype("int64")
    order = onp.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["mxasync", "mxnet"], default="mxasync")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--filters", type=int, default=8)
    args = parser.parse_args()

    mx = importlib.import_module(args.framework)
    np, npx, autograd = mx.np, mx.npx, mx.autograd
    npx.set_np()

    xtr, ytr, xte, yte = load()
    rng = onp.random.default_rng(42)  # the same start on both frameworks
    f = args.filters
    shapes = [(f, 1, 3, 3), (f,), (f * 16, 10), (10,)]
    params = [np.array(rng.normal(0, 0.1, s).astype("float32")) for s in shapes]
    for p in params:
        p.attach_grad()

    def net(x):
        w1, b1, w2, b2 = params
        h = npx.relu(npx.convolution(x, w1, b1, kernel=(3, 3), pad=(1, 1), num_filter=f))
        h = npx.pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        return np.dot(h.reshape(h.shape[0], -1), w2) + b2

    def loss_fn(logits, y):  # softmax cross-entropy, written with mx.np
        return -npx.pick(npx.log_softmax(logits), y).mean()

    start = time.perf_counter()
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
    print(f"{args.framework}: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
