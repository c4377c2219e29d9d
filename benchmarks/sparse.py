"""Sparse kernels, Embedding and softmax CE, and two sparse workloads: mxasync, MXNet 1.9.1 and SciPy by hand.

    python benchmarks/sparse.py [--rounds 3] [--threads 1] [--mxnet /work/venvs/mx191/bin/python]
                                [--before OLD_TREE] [--out F.json]

Each peer runs in its own Python (``--peer mxasync|mxnet|scipy``, alternately, ``--rounds`` times),
all with the same BLAS/OpenMP thread count (``--threads``); MXNet's child never imports mxasync
and the SciPy child imports neither.  Every case is the same work in each peer, on the same
random data (float32):

* kernels: ``dot(csr, dense)`` (a batch of 512 sparse rows of 10^5 features, ~100 non-zeros each,
  times a weight), ``dot(csr.T, dense)`` -> row_sparse (that layer's weight gradient),
  ``dot(dense, csr)`` -> csr, ``sgd_update`` / ``adam_update`` with ``lazy_update`` on a
  row_sparse gradient, ``Embedding`` forward and forward+backward (``sparse_grad`` False/True),
  ``softmax_cross_entropy`` and ``SoftmaxOutput`` forward+backward;
* workloads, one training step each as a user writes it in Gluon: the sparse linear model
  (``sparse.dot`` of a csr batch and a weight with a row_sparse gradient, softmax CE, backward,
  lazy SGD) and a text classifier (Embedding 20k x 128, seq 50, batch 64, mean-pool, Dense(4),
  softmax CE, SGD; hybridized).

The SciPy child does each with the best hand formulation we know (kept in ``_by_hand``).  mxasync
runs twice: as shipped (the threaded engine) and with ``MXASYNC_ENGINE_TYPE=naive`` (every op in the
calling thread: our kernels and op path without the engine's hand-off to a worker).  Per case: the
median over rounds of each child's least disturbed wall and CPU milliseconds per call
(``process_time``: every thread of the process), and our ratios to the peers.  Prints (and with
``--out`` writes) JSON; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

FEATURES, BATCH, NNZ_ROW, CLASSES = 100_000, 512, 100, 4          # the sparse linear model
VOCAB, EMBED, SEQ, TBATCH, TCLASSES = 20_000, 128, 50, 64, 4       # the text classifier
CE_BATCH, CE_CLASSES = 512, 1000                                   # softmax CE kernels
LR, WD = 0.1, 1e-4


def data():
    """The inputs every peer uses, from one seed."""
    rng = np.random.default_rng(0)
    nnz = BATCH * NNZ_ROW
    cols = np.sort(rng.integers(0, FEATURES, (BATCH, NNZ_ROW)), axis=1)
    keep = np.concatenate([np.ones((BATCH, 1), bool), cols[:, 1:] != cols[:, :-1]], axis=1)  # csr: unique columns
    counts = keep.sum(1)
    d = {"indptr": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
         "indices": cols[keep].astype(np.int64),
         "values": rng.random(nnz, dtype=np.float32)[:int(counts.sum())],
         "w": (rng.standard_normal((FEATURES, CLASSES)) * 0.01).astype(np.float32),
         "og": rng.standard_normal((BATCH, CLASSES)).astype(np.float32),
         "lhs": rng.standard_normal((CLASSES, BATCH)).astype(np.float32),
         "label": rng.integers(0, CLASSES, BATCH).astype(np.float32),
         "tokens": rng.integers(0, VOCAB, (TBATCH, SEQ)).astype(np.float32),
         "tlabel": rng.integers(0, TCLASSES, TBATCH).astype(np.float32),
         "emb": (rng.standard_normal((VOCAB, EMBED)) * 0.1).astype(np.float32),
         "emb_og": rng.standard_normal((TBATCH, SEQ, EMBED)).astype(np.float32),
         "logits": rng.standard_normal((CE_BATCH, CE_CLASSES)).astype(np.float32),
         "ce_label": rng.integers(0, CE_CLASSES, CE_BATCH).astype(np.float32)}
    return d


def timed(fn, calls: int, repeat: int) -> dict:
    """The least disturbed of ``repeat`` batches of ``calls`` calls (after 2 warm-up calls): wall and CPU
    ms per call, each the minimum over the batches (other load only ever adds to them)."""
    fn()
    fn()
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        walls.append((time.perf_counter() - t0) / calls * 1e3)
        cpus.append((time.process_time() - c0) / calls * 1e3)
    return {"wall_ms": round(min(walls), 4), "cpu_ms": round(min(cpus), 4)}


# -- mxasync and MXNet: the same code, ``mx`` is either -------------------------------------------------
def _framework_kernels(mx, d) -> dict:
    nd = mx.nd
    x = nd.sparse.csr_matrix((d["values"], d["indices"], d["indptr"]), shape=(BATCH, FEATURES))
    w, og, lhs = nd.array(d["w"]), nd.array(d["og"]), nd.array(d["lhs"])
    g = nd.dot(x, og, transpose_a=True)
    g.wait_to_read()
    mean, var = nd.zeros(w.shape), nd.zeros(w.shape)
    tokens, emb, emb_og = nd.array(d["tokens"]), nd.array(d["emb"]), nd.array(d["emb_og"])
    logits, ce_label = nd.array(d["logits"]), nd.array(d["ce_label"])

    def emb_step(sparse_grad):
        weight = emb.copy()  # each its own gradient buffer
        weight.attach_grad(stype="row_sparse" if sparse_grad else "default")

        def run():
            with mx.autograd.record():
                y = nd.Embedding(tokens, weight, input_dim=VOCAB, output_dim=EMBED, sparse_grad=sparse_grad)
            y.backward(emb_og)
            weight.grad.wait_to_read()
        return run

    def softmax_output():
        logits.attach_grad()
        with mx.autograd.record():
            y = nd.SoftmaxOutput(logits, ce_label)
        y.backward()
        logits.grad.wait_to_read()

    return {
        "dot(csr, dense)": lambda: nd.dot(x, w).wait_to_read(),
        "dot(csr.T, dense) -> row_sparse": lambda: nd.dot(x, og, transpose_a=True).wait_to_read(),
        "dot(dense, csr) -> csr": lambda: nd.dot(lhs, x).wait_to_read(),
        "sgd_update(row_sparse grad, lazy)":
            lambda: nd.sgd_update(w, g, out=w, lr=LR, wd=WD, lazy_update=True).wait_to_read(),
        "adam_update(row_sparse grad, lazy)":
            lambda: nd.adam_update(w, g, mean, var, out=w, lr=1e-3, wd=WD, lazy_update=True).wait_to_read(),
        "Embedding forward":
            lambda: nd.Embedding(tokens, emb, input_dim=VOCAB, output_dim=EMBED).wait_to_read(),
        "Embedding fwd+bwd (dense grad)": emb_step(False),
        "Embedding fwd+bwd (sparse_grad)": emb_step(True),
        "softmax_cross_entropy": lambda: nd.softmax_cross_entropy(logits, ce_label).wait_to_read(),
        "SoftmaxOutput fwd+bwd": softmax_output,
    }


def _framework_workloads(mx, d) -> dict:
    nd, gluon = mx.nd, mx.gluon

    class SparseLinear(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.weight = self.params.get("weight", shape=(FEATURES, CLASSES), grad_stype="row_sparse")
                self.bias = self.params.get("bias", shape=(CLASSES,), init="zeros")

        def forward(self, x):
            return nd.sparse.dot(x, self.weight.data()) + self.bias.data()

    def sparse_linear():
        net = SparseLinear()
        net.initialize(mx.init.Normal(0.01))
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR, "wd": WD, "lazy_update": True},
                                kvstore=None)
        x = nd.sparse.csr_matrix((d["values"], d["indices"], d["indptr"]), shape=(BATCH, FEATURES))
        y = nd.array(d["label"])
        return _gluon_step(mx, net, trainer, x, y, BATCH)

    def text_classifier(sparse_grad):
        net = gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(gluon.nn.Embedding(VOCAB, EMBED, sparse_grad=sparse_grad), _MeanPool(gluon)(),
                    gluon.nn.Dense(TCLASSES))
        net.initialize(mx.init.Xavier())
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR, "wd": WD}, kvstore=None)
        return _gluon_step(mx, net, trainer, nd.array(d["tokens"]), nd.array(d["tlabel"]), TBATCH)

    return {"sparse linear model step (Gluon)": sparse_linear(),
            "text classifier step (Gluon, dense grad)": text_classifier(False),
            "text classifier step (Gluon, sparse_grad)": text_classifier(True)}


def _MeanPool(gluon):
    class MeanPool(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.mean(x, axis=1)
    return MeanPool


def _gluon_step(mx, net, trainer, x, y, batch):
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    params = list(net.collect_params().values())

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        for p in params:
            p.data().wait_to_read()
    return step


# -- SciPy / NumPy by hand --------------------------------------------------------------------------------
# The fastest formulations we know: distinct indices by a mark per value (no sort), products on the
# used columns only (a renumbered csc matrix), rows gathered with ``take`` and scattered as one opaque
# item per row (NumPy's fancy indexing copies narrow rows element by element, ~8x slower).
def _used(idx, n):
    """Sorted distinct values of ``idx`` in [0, n) and each entry's position among them (int32)."""
    mark = np.zeros(n, bool)
    mark[idx] = True
    cols = np.flatnonzero(mark)
    pos = np.empty(n, np.int32)
    pos[cols] = np.arange(cols.size, dtype=np.int32)
    return cols, pos[idx]


def _put_rows(a, rows, values):
    item = np.dtype((np.void, a.itemsize * a.shape[1]))
    a.view(item)[rows, 0] = np.ascontiguousarray(values).view(item)[:, 0]


def _by_hand(d) -> tuple[dict, dict]:
    import scipy.sparse as sp

    x = sp.csr_matrix((d["values"], d["indices"].astype(np.int32), d["indptr"].astype(np.int32)),
                      shape=(BATCH, FEATURES))
    w, og, lhs = d["w"].copy(), d["og"], d["lhs"]
    tokens, emb, emb_og = d["tokens"].astype(np.int64), d["emb"], d["emb_og"].reshape(-1, EMBED)
    logits, ce_label = d["logits"], d["ce_label"].astype(np.int64)

    def used_t(m):  # m on its used columns, transposed: (k x rows) csc
        cols, inv = _used(m.indices, m.shape[1])
        return cols, sp.csc_matrix((m.data, inv, m.indptr), shape=(len(cols), m.shape[0]))

    def rsp_grad(m, dense):  # the rows of m.T @ dense that can be non-zero
        cols, m_t = used_t(m)
        return cols, m_t @ dense

    def dense_csr(a, m):  # a @ m as csr: every row stores m's used columns
        cols, m_t = used_t(m)
        blk = np.ascontiguousarray((m_t @ a.T).T)
        k = len(cols)
        return sp.csr_matrix((blk.reshape(-1), np.tile(cols, a.shape[0]), np.arange(0, (a.shape[0] + 1) * k, k)),
                             shape=(a.shape[0], m.shape[1]))

    rows, blk = rsp_grad(x, og)
    mean, var = np.zeros_like(w), np.zeros_like(w)

    def sgd(w, rows, blk, lr=LR):
        _put_rows(w, rows, np.take(w, rows, axis=0) * (1 - lr * WD) - lr * blk)

    def adam():
        wr = np.take(w, rows, axis=0)
        g = blk + WD * wr
        m = np.take(mean, rows, axis=0) * 0.9 + 0.1 * g
        v = np.take(var, rows, axis=0) * 0.999 + 0.001 * g * g
        _put_rows(mean, rows, m)
        _put_rows(var, rows, v)
        _put_rows(w, rows, wr - 1e-3 * m / (np.sqrt(v) + 1e-8))

    def emb_bwd_sparse():  # the rows of the output gradient summed by token: one sparse product
        r, inv = _used(tokens.reshape(-1), VOCAB)
        onehot_t = sp.csc_matrix((np.ones(inv.size, np.float32), inv, np.arange(inv.size + 1)),
                                 shape=(r.size, inv.size))
        return r, onehot_t @ emb_og

    def emb_bwd_dense():
        idx = tokens.reshape(-1).astype(np.int32)
        onehot_t = sp.csc_matrix((np.ones(idx.size, np.float32), idx, np.arange(idx.size + 1)),
                                 shape=(VOCAB, idx.size))
        return onehot_t @ emb_og

    def softmax(z):
        e = np.exp(z - z.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e

    def ce():
        z = logits - logits.max(axis=1, keepdims=True)
        return (np.log(np.exp(z).sum(axis=1)) - z[np.arange(CE_BATCH), ce_label]).sum()

    def softmax_output():
        p = softmax(logits)
        p[np.arange(CE_BATCH), ce_label] -= 1
        return p

    kernels = {
        "dot(csr, dense)": lambda: x @ w,
        "dot(csr.T, dense) -> row_sparse": lambda: rsp_grad(x, og),
        "dot(dense, csr) -> csr": lambda: dense_csr(lhs, x),
        "sgd_update(row_sparse grad, lazy)": lambda: sgd(w, rows, blk),
        "adam_update(row_sparse grad, lazy)": adam,
        "Embedding forward": lambda: np.take(emb, tokens, axis=0),
        "Embedding fwd+bwd (dense grad)": lambda: (np.take(emb, tokens, axis=0), emb_bwd_dense()),
        "Embedding fwd+bwd (sparse_grad)": lambda: (np.take(emb, tokens, axis=0), emb_bwd_sparse()),
        "softmax_cross_entropy": ce,
        "SoftmaxOutput fwd+bwd": softmax_output,
    }
    return kernels, _by_hand_workloads(d, sp, softmax, sgd, rsp_grad)


def _by_hand_workloads(d, sp, softmax, sgd, rsp_grad) -> dict:
    x = sp.csr_matrix((d["values"], d["indices"].astype(np.int32), d["indptr"].astype(np.int32)),
                      shape=(BATCH, FEATURES))
    w, b, label = d["w"].copy(), np.zeros(CLASSES, np.float32), d["label"].astype(np.int64)

    def linear_step():  # each step's batch is new: its used columns are found again
        p = softmax(x @ w + b)
        p[np.arange(BATCH), label] -= 1
        p /= BATCH
        sgd(w, *rsp_grad(x, p))
        b[:] -= LR * (p.sum(0) + WD * b)

    rng = np.random.default_rng(1)
    emb = d["emb"].copy()
    fc_w = (rng.standard_normal((TCLASSES, EMBED)) * 0.1).astype(np.float32)
    fc_b = np.zeros(TCLASSES, np.float32)
    tokens, tlabel = d["tokens"].astype(np.int64), d["tlabel"].astype(np.int64)

    def text_step(sparse_grad):
        def step():
            h = np.take(emb, tokens, axis=0).mean(axis=1)
            p = softmax(h @ fc_w.T + fc_b)
            p[np.arange(TBATCH), tlabel] -= 1
            p /= TBATCH
            gh = (p @ fc_w) / SEQ
            fc_w[:] -= LR * (p.T @ h + WD * fc_w)
            fc_b[:] -= LR * (p.sum(0) + WD * fc_b)
            # each position of a sequence gets that sequence's pooled gradient: sum them by token
            r, inv = _used(tokens.reshape(-1), VOCAB)
            onehot_t = sp.csc_matrix((np.ones(inv.size, np.float32), inv, np.arange(inv.size + 1)),
                                     shape=(r.size, inv.size))
            gblk = onehot_t @ np.repeat(gh, SEQ, axis=0)
            if sparse_grad:
                sgd(emb, r, gblk)
            else:  # a dense gradient: weight decay reaches every row
                g = np.zeros_like(emb)
                _put_rows(g, r, gblk)
                emb[:] -= LR * (g + WD * emb)
        return step

    return {"sparse linear model step (Gluon)": linear_step,
            "text classifier step (Gluon, dense grad)": text_step(False),
            "text classifier step (Gluon, sparse_grad)": text_step(True)}


# -- one peer's child process, and the driver ------------------------------------------------------------
def run_peer(which: str, calls: int, repeat: int, only: str | None) -> dict:
    d = data()
    if which == "scipy":
        kernels, workloads = _by_hand(d)
    else:
        mx = __import__("mxnet" if which == "mxnet" else "mxasync")
        kernels, workloads = _framework_kernels(mx, d), _framework_workloads(mx, d)
    out = {}
    for name, fn in {**kernels, **workloads}.items():
        if only is None or only in name:
            out[name] = timed(fn, calls, repeat)
    return out


def child(python: str, which: str, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" or which.startswith("mxasync")}
    if which == "mxasync_before":  # another checkout of mxasync (the tree before a change)
        env["PYTHONPATH"] = os.path.abspath(args.before)
    if which == "mxasync_naive":  # every op runs in the calling thread: the kernel and op path, no engine hand-off
        env["MXASYNC_ENGINE_TYPE"] = "naive"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS"):
        env[var] = str(args.threads)
    cmd = [python, os.path.abspath(__file__), "--peer", "mxasync" if which == "mxasync_before" else which, "--calls", str(args.calls),
           "--repeat", str(args.repeat)] + (["--only", args.only] if args.only else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode:
        raise RuntimeError(f"{which} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=10, help="calls per timed batch")
    p.add_argument("--repeat", type=int, default=3, help="timed batches per case in a child (their median)")
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads of every peer")
    p.add_argument("--mxnet", default=os.environ.get("MXNET_PYTHON", "/work/venvs/mx191/bin/python"),
                   help="a Python with MXNet 1.9.1 ('' to skip)")
    p.add_argument("--before", default=None, help="also run the mxasync of this source tree (peer mxasync_before)")
    p.add_argument("--only", default=None, help="run only the cases whose name contains this")
    p.add_argument("--peer", choices=("mxasync", "mxasync_naive", "mxnet", "scipy"), help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help="also write the JSON here")
    a = p.parse_args(argv)
    if a.peer:
        print(json.dumps(run_peer(a.peer, a.calls, a.repeat, a.only)))
        return {}
    peers = {"mxasync": sys.executable, "mxasync_naive": sys.executable, "scipy": sys.executable}
    if a.before:
        peers = {"mxasync_before": sys.executable, **peers}
    if a.mxnet and os.path.exists(a.mxnet):
        peers["mxnet"] = a.mxnet
    runs: dict = {}
    for _ in range(a.rounds):
        for which, python in peers.items():
            for case, t in child(python, which, a).items():
                runs.setdefault(case, {}).setdefault(which, []).append(t)
    res = {"command": " ".join([os.path.basename(sys.executable), "benchmarks/sparse.py", *(argv or sys.argv[1:])]),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
           "cpu_count": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
           "threads": a.threads, "rounds": a.rounds, "cases": _summary(runs)}
    text = json.dumps(res, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return res


def _summary(runs: dict) -> dict:
    cases = {}
    for case, per in runs.items():
        row = {}
        for which, ts in per.items():
            row[which] = {k: round(statistics.median(t[k] for t in ts), 3) for k in ("cpu_ms", "wall_ms")}
        for ours, peer in (("mxasync", "scipy"), ("mxasync", "mxnet"), ("mxasync_naive", "scipy"),
                           ("mxasync", "mxasync_before"), ("mxasync_before", "scipy"), ("mxasync_before", "mxnet")):
            if ours in row and peer in row and row[peer]["cpu_ms"] > 0:
                row[f"{ours}_cpu_over_{peer}"] = round(row[ours]["cpu_ms"] / row[peer]["cpu_ms"], 3)
        cases[case] = row
    return cases


if __name__ == "__main__":
    main()
