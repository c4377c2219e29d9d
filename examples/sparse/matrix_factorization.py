"""Matrix factorization with sparse-gradient embeddings (MXNet's ``example/sparse/matrix_factorization``).

    python examples/sparse/matrix_factorization.py [--optimizer adam|sgd] [--epochs 3]
    /work/venvs/mx191/bin/python examples/sparse/matrix_factorization.py --framework mxnet

Users and items are ``Embedding(sparse_grad=True)`` lookups, so each batch's weight gradients are
``row_sparse`` (only the users and items it rates); the prediction is the dot product of a
user's and an item's factors, the loss the squared error ``0.5 * (pred - score)**2``, and Adam
or SGD with momentum update only the looked-up rows (the lazy update, MXNet's default).  The
ratings are synthetic, from a hidden low-rank model and one fixed seed, and the starting factors
come from another seed, so ``--framework mxnet`` (MXNet 1.9.1) runs the same computation from
the same start: its per-epoch losses are what ``tests/ndarray/sparse/test_matrix_factorization.py``
compares ours with.  Prints JSON: the mean loss of each epoch.
"""

from __future__ import annotations

import argparse
import importlib
import json

import numpy as np


def synthetic_ratings(users: int, items: int, ratings: int, rank: int = 4, seed: int = 0):
    """(user ids, item ids, scores): pairs drawn at random, scored by a hidden rank-``rank`` model plus noise."""
    rng = np.random.default_rng(seed)
    pu, qi = rng.normal(0, 1, (users, rank)), rng.normal(0, 1, (items, rank))
    u, i = rng.integers(0, users, ratings), rng.integers(0, items, ratings)
    score = (pu[u] * qi[i]).sum(axis=1) + rng.normal(0, 0.1, ratings)
    return u.astype(np.float32), i.astype(np.float32), score.astype(np.float32)


def make_optimizer(mx, name: str, lr: float, batch_size: int):
    if name == "adam":
        return mx.optimizer.Adam(learning_rate=lr, rescale_grad=1.0 / batch_size)
    return mx.optimizer.SGD(learning_rate=lr, momentum=0.9, wd=1e-4, rescale_grad=1.0 / batch_size)


def train(mx, args) -> dict:
    users, items, scores = synthetic_ratings(args.users, args.items, args.ratings)
    rng = np.random.default_rng(1)  # the same starting factors on both frameworks
    weights = {"user": mx.nd.array(rng.normal(0, 0.1, (args.users, args.factors)).astype(np.float32)),
               "item": mx.nd.array(rng.normal(0, 0.1, (args.items, args.factors)).astype(np.float32))}
    sizes = {"user": args.users, "item": args.items}
    for w in weights.values():
        w.attach_grad(stype="row_sparse")
    opt = make_optimizer(mx, args.optimizer, args.lr, args.batch_size)
    states = {k: opt.create_state(n, weights[k]) for n, k in enumerate(weights)}
    losses = []
    bs = args.batch_size
    for _ in range(args.epochs):
        total = 0.0
        for start in range(0, len(scores) - bs + 1, bs):
            ids = {"user": mx.nd.array(users[start:start + bs]), "item": mx.nd.array(items[start:start + bs])}
            score = mx.nd.array(scores[start:start + bs])
            with mx.autograd.record():
                u, v = (mx.nd.Embedding(ids[k], weights[k], input_dim=sizes[k], output_dim=args.factors,
                                        sparse_grad=True) for k in ("user", "item"))
                pred = mx.nd.sum(u * v, axis=1)
                loss = 0.5 * mx.nd.square(pred - score)
            loss.backward()
            for n, k in enumerate(weights):
                opt.update(n, weights[k], weights[k].grad, states[k])
            total += float(loss.sum().asscalar())
        losses.append(total / (len(scores) // bs * bs))
    return {"epoch_loss": losses, "optimizer": args.optimizer, "framework": args.framework,
            "grad_stype": weights["user"].grad.stype}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--framework", default="mxasync", choices=["mxasync", "mxnet"])
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    p.add_argument("--users", type=int, default=300)
    p.add_argument("--items", type=int, default=200)
    p.add_argument("--ratings", type=int, default=6000)
    p.add_argument("--factors", type=int, default=8)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--lr", type=float, help="learning rate (default: 0.05 for adam, 1.0 for sgd)")
    args = p.parse_args(argv)
    if args.lr is None:
        args.lr = 0.05 if args.optimizer == "adam" else 1.0
    res = train(importlib.import_module(args.framework), args)
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
