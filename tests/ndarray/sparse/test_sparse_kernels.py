"""The fast sparse, Embedding and softmax-CE kernels (benchmarks/sparse.py) against plain numpy/SciPy:
row gathers and scatters, sums by index, csr.T . dense and dense . csr on used columns, lazy updates,
Embedding's gradients, softmax CE and SoftmaxOutput's gradient."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mxasync as mx
from mxasync import autograd
from mxasync.operator.sparse import kernels as K
from mxasync.test_utils import assert_almost_equal, check_numeric_gradient

rng = np.random.default_rng(7)


@pytest.mark.parametrize("n", [60, 10**9])  # a mark per value, and the sort for a huge range
def test_unique_inverse_and_row_sums_match_numpy(n):
    idx = rng.integers(0, 40, 300) * (n // 60)
    rows, inv = K.unique_inverse(np, idx, n)
    want_rows, want_inv = np.unique(idx, return_inverse=True)
    assert rows.dtype == np.int64 and rows.tolist() == want_rows.tolist() and inv.tolist() == want_inv.tolist()
    vals = rng.standard_normal((300, 2, 3)).astype(np.float32)
    rows, block = K.row_sums(np, idx, vals, n)
    want = np.zeros((len(want_rows), 2, 3), np.float64)
    np.add.at(want, want_inv, vals)
    assert block.dtype == np.float32 and block.shape == want.shape
    assert_almost_equal(block, want, rtol=1e-5, atol=1e-5)


def test_take_and_put_rows_match_fancy_indexing():
    a = rng.standard_normal((30, 4)).astype(np.float32)
    rows = np.array([29, 3, 0, 17])
    assert (K.take_rows(np, a, rows) == a[rows]).all()
    vals = rng.standard_normal((4, 4)).astype(np.float32)
    for target in (a.copy(), np.asfortranarray(a)):  # one item per row, and the fallback
        want = target.copy()
        want[rows] = vals
        K.put_rows(np, target, rows, vals.astype(np.float64))  # converted to the target's type
        assert (target == want).all()


def _csr(shape, density, dtype=np.float32):
    m = sp.random(*shape, density=density, format="csr", dtype=dtype, random_state=3)
    return m, mx.nd.sparse.csr_matrix(m)


def test_dot_csr_t_dense_is_row_sparse_over_used_columns():
    m, x = _csr((20, 500), 0.02)
    og = rng.standard_normal((20, 3)).astype(np.float32)
    g = mx.nd.dot(x, mx.nd.array(og), transpose_a=True)
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == np.unique(m.indices).tolist()  # sorted, unique
    assert_almost_equal(g.asnumpy(), m.T @ og, rtol=1e-5, atol=1e-5)
    empty = mx.nd.sparse.zeros("csr", (4, 9))
    assert mx.nd.dot(empty, mx.nd.ones((4, 2)), transpose_a=True).indices.shape == (0,)


def test_dot_csr_with_repeated_columns_sums_them():
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 4.0], [3, 3, 1], [0, 2, 3]), shape=(2, 5))  # row 0 stores col 3 twice
    dense = np.array([[0, 0, 0, 3, 0], [0, 4, 0, 0, 0]], np.float32)
    w = rng.standard_normal((5, 2)).astype(np.float32)
    og = rng.standard_normal((2, 2)).astype(np.float32)
    assert_almost_equal(mx.nd.dot(x, mx.nd.array(w)).asnumpy(), dense @ w, rtol=1e-5, atol=1e-6)
    assert_almost_equal(mx.nd.dot(x, mx.nd.array(og), transpose_a=True).asnumpy(), dense.T @ og, rtol=1e-5, atol=1e-6)


def test_dot_dense_csr_is_csr_with_the_used_columns():
    m, x = _csr((30, 400), 0.01)
    a = rng.standard_normal((3, 30)).astype(np.float32)
    y = mx.nd.dot(mx.nd.array(a), x)
    assert y.stype == "csr"
    used = np.unique(m.indices)
    assert y.indptr.asnumpy().tolist() == [0, len(used), 2 * len(used), 3 * len(used)]
    assert y.indices.asnumpy().tolist() == np.tile(used, 3).tolist()
    assert_almost_equal(y.asnumpy(), a @ m.toarray(), rtol=1e-5, atol=1e-5)


def test_csr_matrix_follows_indices_written_through_the_array():
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 3))
    w = mx.nd.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert mx.nd.dot(x, w).asnumpy().tolist() == [[0, 1], [4, 6]]
    x.indices[:] = mx.nd.array([2, 2], dtype=np.int64)
    assert mx.nd.dot(x, w).asnumpy().tolist() == [[4, 5], [8, 10]]


@pytest.mark.parametrize("op,states", [("sgd_update", 0), ("sgd_mom_update", 1), ("adam_update", 2),
                                       ("ftrl_update", 2)])
def test_lazy_update_touches_only_the_gradient_rows(op, states):
    w0 = rng.standard_normal((40, 3)).astype(np.float32)
    s0 = [np.abs(rng.standard_normal((40, 3))).astype(np.float32) for _ in range(states)]
    rows = np.array([1, 8, 33])
    g = mx.nd.sparse.row_sparse_array((rng.standard_normal((3, 3)).astype(np.float32), rows), shape=(40, 3))
    w, st = mx.nd.array(w0), [mx.nd.array(s) for s in s0]
    kw = dict(lr=0.1, wd=0.01, **({} if op == "ftrl_update" else {"lazy_update": True}))
    getattr(mx.nd, op)(w, g, *st, out=w, **kw)
    ref, ref_st = mx.nd.array(w0[rows]), [mx.nd.array(s[rows]) for s in s0]
    getattr(mx.nd, op)(ref, mx.nd.array(g.asnumpy()[rows]), *ref_st, out=ref, **kw)
    others = np.setdiff1d(np.arange(40), rows)
    for got, was, want in zip([w, *st], [w0, *s0], [ref, *ref_st], strict=True):
        assert_almost_equal(got.asnumpy()[rows], want.asnumpy(), rtol=1e-6, atol=1e-6)
        assert (got.asnumpy()[others] == was[others]).all()


@pytest.mark.parametrize("sparse_grad", [False, True])
def test_embedding_gradient_sums_repeated_tokens(sparse_grad):
    tokens = np.array([[1, 4, 1], [7, 1, 9.0]], np.float32)
    weight = mx.nd.array(rng.standard_normal((10, 5)).astype(np.float32))
    weight.attach_grad(stype="row_sparse" if sparse_grad else "default")
    og = rng.standard_normal((2, 3, 5)).astype(np.float32)
    with autograd.record():
        y = mx.nd.Embedding(mx.nd.array(tokens), weight, input_dim=10, output_dim=5, sparse_grad=sparse_grad)
    y.backward(mx.nd.array(og))
    assert (y.asnumpy() == weight.asnumpy()[tokens.astype(int)]).all()
    want = np.zeros((10, 5), np.float32)
    np.add.at(want, tokens.astype(int).reshape(-1), og.reshape(-1, 5))
    assert_almost_equal(weight.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)
    if sparse_grad:
        assert weight.grad.stype == "row_sparse" and weight.grad.indices.asnumpy().tolist() == [1, 4, 7, 9]


@pytest.mark.parametrize("sparse_grad", [False, True])
def test_embedding_of_no_tokens_has_a_zero_gradient(sparse_grad):
    weight = mx.nd.ones((5, 3))
    weight.attach_grad(stype="row_sparse" if sparse_grad else "default")
    with autograd.record():
        y = mx.nd.Embedding(mx.nd.zeros((0, 2)), weight, input_dim=5, output_dim=3, sparse_grad=sparse_grad)
    y.backward()
    assert y.shape == (0, 2, 3) and not weight.grad.asnumpy().any()


def test_embedding_dense_gradient_adds_under_grad_req_add():
    weight = mx.nd.ones((6, 2))
    weight.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = mx.nd.Embedding(mx.nd.array([0, 5, 5]), weight, input_dim=6, output_dim=2)
        y.backward()
    assert weight.grad.asnumpy()[:, 0].tolist() == [2, 0, 0, 0, 0, 4]


def test_softmax_cross_entropy_matches_float64_and_numeric_gradient():
    x = rng.standard_normal((6, 5)).astype(np.float32) * 3
    label = np.array([0, 4, 2, 2, 1, 3], np.float32)
    z = x.astype(np.float64) - x.max(1, keepdims=True)
    want = (np.log(np.exp(z).sum(1)) - z[np.arange(6), label.astype(int)]).sum()
    got = mx.nd.softmax_cross_entropy(mx.nd.array(x), mx.nd.array(label)).asnumpy()
    assert got.shape == (1,) and abs(got[0] - want) < 1e-4 * abs(want)
    data, lab = mx.sym.Variable("data"), mx.sym.Variable("label")
    check_numeric_gradient(mx.sym.softmax_cross_entropy(data, lab), {"data": x.astype(np.float64), "label": label},
                           grad_nodes=["data"], numeric_eps=1e-4, rtol=1e-2, atol=1e-3, dtype=np.float64)


@pytest.mark.parametrize("kw", [{}, {"use_ignore": True, "ignore_label": 2, "normalization": "valid"},
                                {"grad_scale": 0.5, "normalization": "batch"}])
def test_softmax_output_gradient_is_softmax_minus_one_hot(kw):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    label = np.array([0, 3, 2, 7, 1], np.float32)  # 7 is out of range: nothing is subtracted on that row
    data = mx.nd.array(x)
    data.attach_grad()
    with autograd.record():
        y = mx.nd.SoftmaxOutput(data, mx.nd.array(label), **kw)
    y.backward()
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert_almost_equal(y.asnumpy(), p, rtol=1e-5, atol=1e-6)
    want = p.copy()
    for i, c in enumerate(label.astype(int)):
        if c < 4:
            want[i, c] -= 1
    keep = label != kw.get("ignore_label", -1) if kw.get("use_ignore") else np.ones(5, bool)
    want *= keep[:, None]
    scale = kw.get("grad_scale", 1.0) / {"batch": 5, "valid": keep.sum()}.get(kw.get("normalization"), 1)
    assert_almost_equal(data.grad.asnumpy(), want * scale, rtol=1e-5, atol=1e-6)
