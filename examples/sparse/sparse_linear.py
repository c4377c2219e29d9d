"""A linear classifier on LibSVM data with sparse storage (MXNet's ``example/sparse/linear_classification``).

    python examples/sparse/sparse_linear.py [--data FILE --features N] [--epochs 3] [--engine mxnet]

Each batch is a ``CSRNDArray`` from ``mx.io.LibSVMIter``; the weight's gradient is
``row_sparse`` (``attach_grad(stype='row_sparse')``: ``dot(csr, w)``'s backward touches only
the features the batch uses) and SGD with momentum updates only those rows (lazy update).
Without ``--data`` a synthetic data set is written first (a fixed seed: the same file and the
same starting weights for every run).  ``--engine mxnet`` runs the very same code on MXNet
1.9.1 (``import mxnet``), which is how its losses are compared with ours.  Prints JSON: the
mean logistic loss of each epoch and the final accuracy.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import tempfile

import numpy as np


def synthetic_libsvm(path: str, rows: int, features: int, nnz_per_row: int, seed: int = 0) -> None:
    """Rows of ``nnz_per_row`` random features; the label is the sign of a hidden sparse linear model."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(features) * (rng.random(features) < 0.3)
    with open(path, "w") as f:
        for _ in range(rows):
            cols = np.sort(rng.choice(features, nnz_per_row, replace=False))
            vals = rng.random(nnz_per_row).round(4)
            label = int(vals @ truth[cols] > 0)
            f.write(f"{label} " + " ".join(f"{c}:{v}" for c, v in zip(cols, vals, strict=True)) + "\n")


def train(mx, path: str, features: int, epochs: int, batch_size: int, lr: float, seed: int = 1) -> dict:
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch_size)
    w0 = np.random.default_rng(seed).normal(0, 0.01, (features, 1)).astype(np.float32)
    weight = mx.nd.array(w0)
    bias = mx.nd.zeros((1,))
    weight.attach_grad(stype="row_sparse")
    bias.attach_grad()
    opt = mx.optimizer.SGD(learning_rate=lr, momentum=0.9, wd=1e-4, rescale_grad=1.0 / batch_size)
    states = [opt.create_state(0, weight), opt.create_state(1, bias)]
    losses = []
    for _ in range(epochs):
        it.reset()
        total, count = 0.0, 0
        for batch in it:
            x, y = batch.data[0], batch.label[0].reshape((-1, 1))
            with mx.autograd.record():
                z = mx.nd.broadcast_add(mx.nd.sparse.dot(x, weight), bias)
                # logistic loss, stable form: max(z, 0) - z*y + log(1 + exp(-|z|))
                loss = mx.nd.relu(z) - z * y + mx.nd.log1p(mx.nd.exp(-mx.nd.abs(z)))
            loss.backward()
            opt.update(0, weight, weight.grad, states[0])
            opt.update(1, bias, bias.grad, states[1])
            total += float(loss.sum().asscalar())
            count += batch_size - batch.pad
        losses.append(total / count)
    it.reset()
    correct, seen = 0, 0
    for batch in it:
        z = (mx.nd.sparse.dot(batch.data[0], weight) + bias).asnumpy().reshape(-1)
        y = batch.label[0].asnumpy()
        n = batch_size - batch.pad
        correct += int(((z[:n] > 0) == (y[:n] > 0.5)).sum())
        seen += n
    return {"epoch_loss": losses, "accuracy": correct / seen}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", help="a LibSVM file (0-based feature indices); synthetic when omitted")
    p.add_argument("--features", type=int, default=1000)
    p.add_argument("--rows", type=int, default=2000, help="rows of the synthetic data set")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--engine", default="mxasync", choices=["mxasync", "mxnet"])
    a = p.parse_args(argv)
    mx = importlib.import_module(a.engine)
    path = a.data
    if path is None:
        path = os.path.join(tempfile.mkdtemp(prefix="sparse-linear-"), "train.libsvm")
        synthetic_libsvm(path, a.rows, a.features, nnz_per_row=10)
    res = train(mx, path, a.features, a.epochs, a.batch_size, a.lr)
    res["engine"] = a.engine
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
