"""A sparse linear classifier: csr batch (256 x 10^5 features, 50 non-zeros a row) dot a weight of
10^5 x 8, plus a bias, softmax cross-entropy, plain SGD (lr 0.1) that updates only the weight rows the
batch touches.

MXNet API: ``nd.sparse.dot(csr, weight)`` under autograd with a ``row_sparse`` weight gradient and the
SGD optimizer's lazy update.  PyTorch has no lazily updated csr-dot weight; its formulation of the same
computation is ``nn.EmbeddingBag(mode='sum', sparse=True)`` with the csr values as per-sample weights
(a sparse gradient of the touched rows), and ``torch.optim.SGD``, which applies it row by row.
"""

from __future__ import annotations

import numpy as np

from .common import Bench

SPEC = {"batch": 256, "features": 100_000, "nnz_per_row": 50, "classes": 8, "lr": 0.1}


def _csr():
    """indptr, indices, values and labels of the fixed batch (columns sorted within a row)."""
    rng = np.random.default_rng(0)
    rows = [np.sort(rng.choice(SPEC["features"], SPEC["nnz_per_row"], replace=False))
            for _ in range(SPEC["batch"])]
    indices = np.concatenate(rows).astype(np.int64)
    indptr = np.arange(SPEC["batch"] + 1, dtype=np.int64) * SPEC["nnz_per_row"]
    values = rng.random(indices.size).astype(np.float32)
    return indptr, indices, values, rng.integers(0, SPEC["classes"], SPEC["batch"]).astype(np.float32)


def build_mx(mx, name: str, cfg: dict) -> Bench:
    indptr, indices, values, labels = _csr()
    x = mx.nd.sparse.csr_matrix((values, indices, indptr), shape=(SPEC["batch"], SPEC["features"]))
    y = mx.nd.array(labels)
    weight = mx.gluon.Parameter("weight", shape=(SPEC["features"], SPEC["classes"]), grad_stype="row_sparse")
    bias = mx.gluon.Parameter("bias", shape=(SPEC["classes"],))
    for p in (weight, bias):
        p.initialize(mx.init.Normal(0.01), ctx=mx.cpu())
    trainer = mx.gluon.Trainer([weight, bias], "sgd", {"learning_rate": SPEC["lr"], "lazy_update": True})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with mx.autograd.record():
            loss = loss_fn(mx.nd.sparse.dot(x, weight.data()) + bias.data(), y)
        loss.backward()
        trainer.step(SPEC["batch"])
        mx.nd.waitall()

    return Bench(step, {"weight_grad_stype": weight.grad().stype})


def build_torch(torch, name: str, cfg: dict) -> Bench:
    indptr, indices, values, labels = _csr()
    torch.manual_seed(0)
    weight = torch.nn.EmbeddingBag(SPEC["features"], SPEC["classes"], mode="sum", sparse=True)
    torch.nn.init.normal_(weight.weight, std=0.01)
    bias = torch.nn.Parameter(torch.zeros(SPEC["classes"]))
    opt = torch.optim.SGD([weight.weight, bias], lr=SPEC["lr"])
    idx, offsets = torch.from_numpy(indices), torch.from_numpy(indptr[:-1])
    per_sample, y = torch.from_numpy(values), torch.from_numpy(labels).long()
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(weight(idx, offsets, per_sample_weights=per_sample) + bias, y).backward()
        opt.step()

    return Bench(step)
