"""Sparse ``dot`` and a lazy row_sparse SGD update against SciPy/numpy doing the same work by hand.

    python benchmarks/sparse.py [--rows 100000] [--features 1000000] [--nnz-per-row 20] [--dim 16] [--repeat 5]

Workloads (float32): ``dot(csr, dense)`` (a batch of sparse rows times a weight),
``dot(csr.T, dense)`` giving a row_sparse gradient, and ``sgd_update`` with momentum of a
weight by a row_sparse gradient (only the touched rows).  Each is timed through mxasync (the
engine push, the kernel and the wait) and as the plain SciPy/numpy code a user would write.
Prints JSON with the best milliseconds of each and the ratio; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best  # noqa: E402

import mxasync as mx  # noqa: E402


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10000)
    p.add_argument("--features", type=int, default=1000000)
    p.add_argument("--nnz-per-row", type=int, default=20)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    nnz = a.rows * a.nnz_per_row
    m = sp.csr_matrix((rng.random(nnz, dtype=np.float32),
                       (np.repeat(np.arange(a.rows), a.nnz_per_row), rng.integers(0, a.features, nnz))),
                      shape=(a.rows, a.features))
    w_np = rng.standard_normal((a.features, a.dim)).astype(np.float32)
    og_np = rng.standard_normal((a.rows, a.dim)).astype(np.float32)
    x, w, og = mx.nd.sparse.csr_matrix(m), mx.nd.array(w_np), mx.nd.array(og_np)
    mom, mom_np = mx.nd.zeros(w.shape), np.zeros_like(w_np)
    res: dict = {"workload": vars(a), "python": platform.python_version(), "results": {}}

    def record(name, ours, by_hand):
        t_ours, t_hand = best(ours, a.repeat), best(by_hand, a.repeat)
        res["results"][name] = {"mxasync_ms": round(t_ours * 1e3, 3), "scipy_ms": round(t_hand * 1e3, 3),
                                "ratio": round(t_ours / t_hand, 3)}

    record("dot(csr, dense)", lambda: mx.nd.dot(x, w).wait_to_read(), lambda: m @ w_np)

    def grad_by_hand():  # the rows of m.T @ og that can be non-zero: renumber the used columns
        cols, inv = np.unique(m.indices, return_inverse=True)
        sub = sp.csr_matrix((m.data, inv, m.indptr), shape=(m.shape[0], len(cols)))
        return cols, np.asarray(sub.T @ og_np)

    record("dot(csr.T, dense) -> row_sparse", lambda: mx.nd.dot(x, og, transpose_a=True).wait_to_read(),
           grad_by_hand)
    g = mx.nd.dot(x, og, transpose_a=True)
    rows, blk = grad_by_hand()

    def sgd_ours():
        mx.nd.sgd_mom_update(w, g, mom, out=w, lr=0.01, momentum=0.9, wd=1e-4)
        w.wait_to_read()

    def sgd_by_hand():
        mom_np[rows] = 0.9 * mom_np[rows] - 0.01 * (blk + 1e-4 * w_np[rows])
        w_np[rows] += mom_np[rows]

    record("sgd_mom_update(row_sparse grad, lazy)", sgd_ours, sgd_by_hand)
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
