"""Record MXNet 1.9.1's ``_contrib_group_adagrad_update`` and ``GroupAdaGrad`` results for
tests/operator/test_group_adagrad.py.  Run by hand only, with the reference MXNet:

    /work/venvs/mx191/bin/python tests/operator/fixtures_optimizer_ops/make_group_adagrad.py

Writes ``group_adagrad.npz``: per case the inputs, the params (JSON ``spec``) and the weight and
history after the update(s).  MXNet's op takes a row_sparse gradient only (dense weight and history,
or row_sparse weight and history); the optimizer's dense-gradient path is its Python formula.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20261127)
store: dict[str, np.ndarray] = {}
ROWS, COLS = 6, 3
STORED = [0, 2, 5]  # the gradient's rows


def sparse_grad() -> np.ndarray:
    g = np.zeros((ROWS, COLS), np.float32)
    g[STORED] = rng.uniform(-1, 1, (len(STORED), COLS))
    return g


def op_case(case: str, weight_stype: str, params: dict) -> None:
    w = rng.uniform(-1, 1, (ROWS, COLS)).astype(np.float32)
    h = rng.uniform(0, 1, (ROWS, 1)).astype(np.float32)
    g = sparse_grad()
    wn, hn = mx.nd.array(w).tostype(weight_stype), mx.nd.array(h).tostype(weight_stype)
    mx.nd.contrib.group_adagrad_update(wn, mx.nd.array(g).tostype("row_sparse"), hn, out=wn, **params)
    store.update({f"{case}/weight": w, f"{case}/grad": g, f"{case}/history": h,
                  f"{case}/weight_after": wn.asnumpy(), f"{case}/history_after": hn.asnumpy(),
                  f"{case}/spec": np.array(json.dumps(dict(kind="op", weight_stype=weight_stype, params=params)))})


def optimizer_case(case: str, grad_stype: str, params: dict, steps: int = 2) -> None:
    w = rng.uniform(-1, 1, (ROWS, COLS)).astype(np.float32)
    grads = [sparse_grad() for _ in range(steps)]
    opt = mx.optimizer.contrib.GroupAdaGrad(**params)
    wn = mx.nd.array(w)
    state = opt.create_state(0, wn)
    for g in grads:
        opt.update(0, wn, mx.nd.array(g).tostype(grad_stype), state)
    store.update({f"{case}/weight": w, f"{case}/grads": np.stack(grads), f"{case}/weight_after": wn.asnumpy(),
                  f"{case}/history_after": state.asnumpy(),
                  f"{case}/spec": np.array(json.dumps(dict(kind="optimizer", grad_stype=grad_stype, params=params)))})


def main() -> None:
    p = dict(lr=0.1, rescale_grad=0.7, clip_gradient=0.5, epsilon=1e-5)
    op_case("op_dense_weight", "default", p)
    op_case("op_row_sparse_weight", "row_sparse", dict(lr=0.2, epsilon=1e-3))
    o = dict(learning_rate=0.1, rescale_grad=0.5, clip_gradient=0.3, eps=1e-4)
    optimizer_case("optimizer_dense_grad", "default", o)
    optimizer_case("optimizer_row_sparse_grad", "row_sparse", o)
    optimizer_case("optimizer_no_clip", "row_sparse", dict(learning_rate=0.05), steps=3)
    np.savez(HERE / "group_adagrad.npz", **store)
    print("wrote group_adagrad.npz:", sorted({k.split("/")[0] for k in store}))


if __name__ == "__main__":
    main()
