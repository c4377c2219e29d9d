"""Regenerate the MXNet 1.9.1 reference fixtures of ``tests/operator/test_linalg.py``. Run by hand only:

    /work/venvs/mx191/bin/python tests/operator/fixtures_linalg/make_fixtures.py

It needs the real ``mxnet`` 1.9.1 (never a dependency of mxasync). Each case runs one op
in float64 under ``mx.autograd`` with a fixed head gradient and stores ``<case>/<name>``
arrays (inputs ``in0``..., outputs ``out0``..., heads ``head0``..., input gradients
``grad0``...) plus a ``<case>/spec`` JSON string: the op name, its params, and the inputs
whose gradients MXNet records.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).resolve().parent
rng = np.random.default_rng(20240918)
store: dict[str, np.ndarray] = {}
nd = mx.nd


def rand(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def spd(*shape: int) -> np.ndarray:
    x = rand(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def shifted(*shape: int) -> np.ndarray:
    return rand(*shape) + 3 * np.eye(shape[-1])


def record(case: str, op: str, mx_fn, inputs: list[np.ndarray], params: dict, grads: tuple[int, ...] = (0,),
           heads_for: tuple[int, ...] | None = None):
    xs = [mx.nd.array(x, dtype="float64") for x in inputs]
    for i in grads:
        xs[i].attach_grad()
    with mx.autograd.record():
        out = mx_fn(*xs, **params)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape), dtype="float64") for o in outs]
    if grads:
        mx.autograd.backward(outs, heads)
    for i, x in enumerate(inputs):
        store[f"{case}/in{i}"] = x.astype(np.float64)
    for i, (o, h) in enumerate(zip(outs, heads, strict=True)):
        store[f"{case}/out{i}"] = o.asnumpy()
        store[f"{case}/head{i}"] = h.asnumpy()
    for i in grads:
        store[f"{case}/grad{i}"] = xs[i].grad.asnumpy()
    store[f"{case}/spec"] = np.array(json.dumps(dict(op=op, params=params, grads=list(grads))))


la = nd.linalg
# gemm / gemm2: transposes, alpha/beta, the row axis
record("gemm", "_linalg_gemm", la.gemm, [rand(2, 3, 4), rand(2, 4, 5), rand(2, 3, 5)],
       dict(alpha=1.5, beta=-0.5), (0, 1, 2))
record("gemm_t", "_linalg_gemm", la.gemm, [rand(4, 3), rand(5, 4), rand(3, 5)],
       dict(transpose_a=True, transpose_b=True), (0, 1, 2))
record("gemm2", "_linalg_gemm2", la.gemm2, [rand(2, 3), rand(3, 4)], dict(alpha=2.0), (0, 1))
record("gemm2_axis", "_linalg_gemm2", la.gemm2, [rand(3, 2, 4), rand(4, 2, 5)], dict(axis=-3), (0, 1))
record("gemm2_axis0_ta", "_linalg_gemm2", la.gemm2, [rand(4, 2, 3), rand(4, 2, 5)], dict(axis=0, transpose_a=True),
       (0, 1))
# Cholesky family: potrf's gradient is symmetric, potri's lower triangular
record("potrf", "_linalg_potrf", la.potrf, [spd(2, 3, 3)], {})
record("potri", "_linalg_potri", la.potri, [np.linalg.cholesky(spd(2, 3, 3))], {})
for t in (False, True):
    for r in (False, True):
        for lo in (True, False):
            b = rand(2, 3, 2) if not r else rand(2, 2, 3)
            tag = f"t{t:d}r{r:d}l{lo:d}"
            p = dict(transpose=t, rightside=r, lower=lo, alpha=1.5)
            record(f"trmm_{tag}", "_linalg_trmm", la.trmm, [rand(2, 3, 3), b], p, (0, 1))
            record(f"trsm_{tag}", "_linalg_trsm", la.trsm, [shifted(2, 3, 3), b], p, (0, 1))
record("sumlogdiag", "_linalg_sumlogdiag", la.sumlogdiag, [spd(2, 3, 3)], {})
record("sumlogdiag_2d", "_linalg_sumlogdiag", la.sumlogdiag, [spd(3, 3)], {})
record("syrk", "_linalg_syrk", la.syrk, [rand(2, 2, 3)], dict(alpha=0.5))
record("syrk_t", "_linalg_syrk", la.syrk, [rand(2, 3)], dict(transpose=True))
record("gelqf", "_linalg_gelqf", la.gelqf, [rand(2, 3)], {})
record("gelqf_batch", "_linalg_gelqf", la.gelqf, [rand(2, 3, 5)], {})
for o in (0, 1, -2):
    record(f"extractdiag_{o}", "_linalg_extractdiag", la.extractdiag, [rand(2, 4, 4)], dict(offset=o))
    record(f"makediag_{o}", "_linalg_makediag", la.makediag, [rand(2, 3)], dict(offset=o))
for o, lo in ((0, True), (0, False), (1, True), (2, False), (-1, True), (-1, False)):
    tag = f"{o}_{lo:d}".replace("-", "m")
    record(f"extracttrian_{tag}", "_linalg_extracttrian", la.extracttrian, [rand(2, 4, 4)], dict(offset=o, lower=lo))
    record(f"maketrian_{tag}", "_linalg_maketrian", la.maketrian, [rand(2, 6)], dict(offset=o, lower=lo))
record("inverse", "_linalg_inverse", la.inverse, [shifted(2, 3, 3)], {})
record("det", "_linalg_det", la.det, [shifted(2, 3, 3)], {})
record("det_2d", "_linalg_det", la.det, [shifted(3, 3)], {})
neg = shifted(2, 3, 3)
neg[0] = -neg[0]
record("slogdet", "_linalg_slogdet", la.slogdet, [neg], {})
# gather_nd / scatter_nd: negative indices, duplicates (gather adds up; scatter keeps the last), dropped indices
data = rand(3, 4, 2)
record("gather_nd", "gather_nd", nd.gather_nd, [data, np.array([[0, 2, -1, 0], [1, 3, 0, 1]], float)], {})
record("gather_nd_m1", "gather_nd", nd.gather_nd, [data, np.array([[[2, 0], [-3, 2]]], float)], {})
record("scatter_nd", "scatter_nd", nd.scatter_nd, [rand(4, 2), np.array([[0, 2, 1, 0], [1, 3, 0, 3]], float)],
       dict(shape=(3, 4, 2)))
record("scatter_nd_dup", "scatter_nd", nd.scatter_nd, [rand(3), np.array([[0, 0, 1], [1, 1, 2]], float)],
       dict(shape=(3, 4)))
record("scatter_nd_drop", "scatter_nd", nd.scatter_nd, [rand(3), np.array([[5, 0, -1], [0, 1, 1]], float)],
       dict(shape=(3, 4)), grads=())  # MXNet's backward (a gather) rejects the dropped index

np.savez_compressed(HERE / "mxnet_ref.npz", **store)
print(f"{len(store)} arrays -> {HERE / 'mxnet_ref.npz'}")
