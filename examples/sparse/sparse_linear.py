"""A linear classifier on LibSVM data with sparse storage (MXNet's ``example/sparse/linear_classification``).

    python examples/sparse/sparse_linear.py [--data FILE --features N] [--epochs 3] [--engine mxnet]
    mxasync launch -n 2 python examples/sparse/sparse_linear.py --kvstore dist_sync --batch-size 50

Each batch is a ``CSRNDArray`` from ``mx.io.LibSVMIter``; the weight's gradient is
``row_sparse`` (``attach_grad(stype='row_sparse')``: ``dot(csr, w)``'s backward touches only
the features the batch uses) and SGD with momentum updates only those rows (lazy update).
Without ``--data`` a synthetic data set is written first (a fixed seed: the same file and the
same starting weights for every run).  ``--engine mxnet`` runs the very same code on MXNet
1.9.1 (``import mxnet``), which is how its losses are compared with ours.  Prints JSON: the
mean logistic loss of each epoch and the final accuracy.

``--kvstore TYPE`` trains through a KVStore as MXNet's example does: the store holds the
row_sparse weight and runs the optimizer (``set_optimizer``); each batch pulls just the weight
rows its features use (``row_sparse_pull(row_ids=batch.data[0].indices)``) and pushes the
row_sparse gradient.  Under ``dist_sync`` each of the N workers reads every N-th block of
``--batch-size`` rows (block ``i*N + rank``), so the workers' batch ``i`` together are the rows of
batch ``i`` of one process run with ``--batch-size`` N times as large: as the store sums the
workers' gradients and ``rescale_grad`` is ``1/(batch_size*N)``, both runs train alike and print
the same losses (mean over all rows, summed across workers through a second store).
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


def shard_blocks(path: str, out: str, block: int, rank: int, num_workers: int) -> None:
    """Write the blocks ``i*num_workers + rank`` of ``block`` lines of ``path`` to ``out`` (this worker's rows)."""
    with open(path) as f:
        lines = f.readlines()
    with open(out, "w") as f:
        for start in range(rank * block, len(lines), block * num_workers):
            f.writelines(lines[start:start + block])


def train_kv(mx, kv, path: str, features: int, epochs: int, batch_size: int, lr: float, seed: int = 1) -> dict:
    """``train`` through ``kv``: it holds the row_sparse weight and runs SGD on the pushed gradients."""
    nw = kv.num_workers
    if nw > 1:
        mine = f"{path}.part{kv.rank}"
        shard_blocks(path, mine, batch_size, kv.rank, nw)
        path = mine
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch_size)
    w0 = np.random.default_rng(seed).normal(0, 0.01, (features, 1)).astype(np.float32)
    kv.init("weight", mx.nd.array(w0).tostype("row_sparse"))
    kv.init("bias", mx.nd.zeros((1,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=lr, momentum=0.9, wd=1e-4, rescale_grad=1.0 / (batch_size * nw)))
    stats = mx.kv.create(kv.type)  # no optimizer: a push sums the workers' loss totals
    stats.init("sum", mx.nd.zeros((2,)))
    weight = mx.nd.sparse.zeros("row_sparse", (features, 1))
    bias = mx.nd.zeros((1,))
    weight.attach_grad(stype="row_sparse")
    bias.attach_grad()

    def summed(total: float, count: int) -> tuple[float, float]:
        out = mx.nd.zeros((2,))
        stats.push("sum", mx.nd.array([total, count]))
        stats.pull("sum", out=out)
        return tuple(out.asnumpy().tolist())

    losses = []
    for _ in range(epochs):
        it.reset()
        total, count = 0.0, 0
        for batch in it:
            x, y = batch.data[0], batch.label[0].reshape((-1, 1))
            kv.row_sparse_pull("weight", out=weight, row_ids=x.indices)  # only the rows this batch uses
            kv.pull("bias", out=bias)
            with mx.autograd.record():
                z = mx.nd.broadcast_add(mx.nd.sparse.dot(x, weight), bias)
                loss = mx.nd.relu(z) - z * y + mx.nd.log1p(mx.nd.exp(-mx.nd.abs(z)))
            loss.backward()
            kv.push("weight", weight.grad)
            kv.push("bias", bias.grad)
            total += float(loss.sum().asscalar())
            count += batch_size - batch.pad
        t, c = summed(total, count)
        losses.append(t / c)
    it.reset()
    correct, seen = 0, 0
    for batch in it:
        x = batch.data[0]
        kv.row_sparse_pull("weight", out=weight, row_ids=x.indices)
        kv.pull("bias", out=bias)
        z = (mx.nd.sparse.dot(x, weight) + bias).asnumpy().reshape(-1)
        y = batch.label[0].asnumpy()
        n = batch_size - batch.pad
        correct += int(((z[:n] > 0) == (y[:n] > 0.5)).sum())
        seen += n
    c, s = summed(correct, seen)
    return {"epoch_loss": losses, "accuracy": c / s, "workers": nw}


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
    p.add_argument("--kvstore", help="train through this KVStore type (local, device, dist_sync, ...)")
    a = p.parse_args(argv)
    mx = importlib.import_module(a.engine)
    kv = mx.kv.create(a.kvstore) if a.kvstore else None
    path = a.data
    if path is None:  # every worker writes the same file (a fixed seed) in its own directory
        path = os.path.join(tempfile.mkdtemp(prefix="sparse-linear-"), "train.libsvm")
        synthetic_libsvm(path, a.rows, a.features, nnz_per_row=10)
    if kv is None:
        res = train(mx, path, a.features, a.epochs, a.batch_size, a.lr)
    else:
        res = train_kv(mx, kv, path, a.features, a.epochs, a.batch_size, a.lr)
    res["engine"] = a.engine
    if kv is None or kv.rank == 0:
        print(json.dumps(res), flush=True)
    return res


if __name__ == "__main__":
    main()
