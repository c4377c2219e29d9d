"""Sparse NDArrays: creation, storage casts, ops against numpy/SciPy, gradients, bounded memory."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mxasync as mx
from mxasync.test_utils import assert_almost_equal, check_numeric_gradient, check_symbolic_backward, rand_ndarray

rng = np.random.default_rng(0)


def _dense(shape, density=0.4):
    a = rng.standard_normal(shape).astype(np.float32)
    a[rng.random(shape) > density] = 0
    return a


def test_create_and_parts():
    a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
    assert a.stype == "csr" and a.shape == (3, 3) and a.dtype == np.float32
    assert a.indptr.asnumpy().tolist() == [0, 2, 2, 3]
    assert a.indices.dtype == np.int64
    assert a.asnumpy().tolist() == [[1, 0, 2], [0, 0, 0], [0, 3, 0]]
    assert (a.asscipy() != sp.csr_matrix(a.asnumpy())).nnz == 0
    a.check_format()
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [2]), shape=(4, 2))
    assert r.indices.asnumpy().tolist() == [2] and r.asnumpy()[2].tolist() == [1.0, 2.0]
    m = sp.random(5, 4, 0.5, format="csr", dtype=np.float32, random_state=1)
    assert_almost_equal(mx.nd.sparse.array(m).asnumpy(), m.toarray())
    assert mx.nd.zeros((2, 3), stype="row_sparse").stype == "row_sparse"
    assert mx.nd.sparse.zeros_like(a).asnumpy().sum() == 0
    with pytest.raises(mx.MXNetError, match="out of range"):  # checked at construction (issue 34)
        mx.nd.sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 3))


@pytest.mark.parametrize("src", ["default", "csr", "row_sparse"])
@pytest.mark.parametrize("dst", ["default", "csr", "row_sparse"])
def test_cast_storage_both_ways(src, dst):
    d = _dense((5, 4))
    x = mx.nd.array(d).tostype(src)
    y = mx.nd.cast_storage(x, stype=dst)
    assert y.stype == dst
    assert_almost_equal(y.asnumpy(), d)
    assert_almost_equal(x.copyto(mx.cpu()).asnumpy(), d)


def test_slicing_and_copy():
    d = _dense((6, 5))
    a = mx.nd.array(d).tostype("csr")
    assert_almost_equal(a[1:4].asnumpy(), d[1:4])
    assert a[2].shape == (1, 5)
    b = mx.nd.zeros((6, 5), stype="csr")
    a.copyto(b)
    assert_almost_equal(b.asnumpy(), d)
    dense_target = mx.nd.zeros((6, 5))
    dense_target[:] = a
    assert_almost_equal(dense_target.asnumpy(), d)


_DOT = [("csr", "default", False, "default"), ("csr", "default", True, "row_sparse"),
        ("csr", "row_sparse", False, "default"), ("default", "csr", False, "csr"),
        ("row_sparse", "default", False, "default")]


@pytest.mark.parametrize("ls,rs,ta,out", _DOT)
def test_dot_storage_and_values(ls, rs, ta, out):
    a = _dense((6, 4))
    b = _dense((6 if ta else 4, 3), 0.7)
    res = mx.nd.dot(mx.nd.array(a).tostype(ls), mx.nd.array(b).tostype(rs), transpose_a=ta)
    assert res.stype == out
    assert_almost_equal(res.asnumpy(), (a.T if ta else a) @ b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op,np_fn,out", [("elemwise_add", np.add, "row_sparse"), ("elemwise_sub", np.subtract,
                                          "row_sparse"), ("elemwise_mul", np.multiply, "row_sparse")])
def test_elemwise_rsp(op, np_fn, out):
    a, b = _dense((5, 3)), _dense((5, 3))
    r = getattr(mx.nd, op)(mx.nd.array(a).tostype("row_sparse"), mx.nd.array(b).tostype("row_sparse"))
    assert r.stype == out
    assert_almost_equal(r.asnumpy(), np_fn(a, b))


def test_unary_keeps_sparsity_and_fallback_warns(caplog):
    d = _dense((4, 4))
    x = mx.nd.array(d).tostype("csr")
    assert mx.nd.square(x).stype == "csr"
    assert_almost_equal(mx.nd.sqrt(mx.nd.abs(x)).asnumpy(), np.sqrt(np.abs(d)))
    assert (x * 2).stype == "csr" and (x + 1).stype == "default"
    with caplog.at_level("WARNING", logger="mxasync"):
        y = mx.nd.exp(mx.nd.array(d).tostype("row_sparse") * 1.5)  # exp(0) != 0: MXNet falls back
    assert y.stype == "default"
    assert_almost_equal(y.asnumpy(), np.exp(d * 1.5), rtol=1e-4)


def test_retain_square_sum_sum():
    d = _dense((6, 3))
    r = mx.nd.array(d).tostype("row_sparse")
    kept = mx.nd.sparse.retain(r, mx.nd.array([0, 3]))
    want = np.zeros_like(d)
    want[[0, 3]] = d[[0, 3]]
    assert_almost_equal(kept.asnumpy(), want)
    s = mx.nd._internal._square_sum(r, axis=1, keepdims=True)
    assert s.stype == "row_sparse"
    assert_almost_equal(s.asnumpy(), (d * d).sum(axis=1, keepdims=True))
    c = mx.nd.array(d).tostype("csr")
    assert_almost_equal(mx.nd.mean(c, axis=0).asnumpy(), d.mean(axis=0))


def test_retain_keeps_every_asked_row_and_kvstore_pull_returns_them():
    """MXNet's rule: the asked rows are the result's indices (zeros where none is stored), so a
    row_sparse_pull returns exactly the rows asked for (sorted, unique)."""
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(4, 2))
    kept = mx.nd.sparse.retain(r, mx.nd.array([3, 1, 0]))
    assert kept.indices.asnumpy().tolist() == [0, 1, 3]
    assert kept.data.asnumpy().tolist() == [[0, 0], [1, 2], [0, 0]]
    kv = mx.kv.create("local")
    kv.init(0, r)
    out = mx.nd.sparse.zeros("row_sparse", (4, 2))
    kv.row_sparse_pull(0, out=out, row_ids=mx.nd.array([3, 0, 0]))
    assert out.indices.asnumpy().tolist() == [0, 3]
    assert not out.data.asnumpy().any()


def test_gradients_through_bound_graph():
    d = _dense((5, 4))
    lhs = mx.sym.Variable("lhs", stype="csr")
    rhs = mx.sym.Variable("rhs")
    loc = {"lhs": mx.nd.array(d).tostype("csr"), "rhs": rand_ndarray((4, 3))}
    check_numeric_gradient(mx.sym.sparse.dot(lhs, rhs), loc, grad_nodes=["rhs"])
    x = mx.sym.Variable("x", stype="row_sparse")
    check_numeric_gradient(mx.sym.square(x), {"x": mx.nd.array(d).tostype("row_sparse")},
                           grad_stype_dict={"x": "row_sparse"}, dtype=np.float64)
    g = check_symbolic_backward(mx.sym.sparse.elemwise_add(x, x), {"x": mx.nd.array(d).tostype("row_sparse")},
                                [np.ones_like(d)], {"x": 2 * np.ones_like(d)}, grad_stypes={"x": "row_sparse"})
    assert g["x"].stype == "row_sparse"


def test_sparse_embedding_gradient_is_row_sparse():
    data = mx.sym.Variable("data")
    emb = mx.sym.Embedding(data, input_dim=20, output_dim=3, sparse_grad=True, name="e")
    exe = emb.simple_bind(mx.cpu(), grad_req={"data": "null", "e_weight": "write"}, data=(4,))
    exe.arg_dict["data"][:] = np.array([1, 5, 5, 7])
    exe.arg_dict["e_weight"][:] = np.arange(60, dtype=np.float32).reshape(20, 3)
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((4, 3))])
    g = exe.grad_dict["e_weight"]
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == [1, 5, 7]
    assert g.asnumpy()[5].tolist() == [2.0, 2.0, 2.0]


def test_huge_csr_dot_and_lazy_update_in_bounded_memory():
    """10^6 x 10^6 csr with 10^5 non-zeros: forward dot, its row_sparse weight gradient (csr.T . dy) and a
    lazy SGD update touch the stored elements and rows only (a dense operand would need 4 TB)."""
    import tracemalloc

    n, nnz = 10**6, 10**5
    r = np.random.default_rng(1)
    m = sp.csr_matrix((r.random(nnz, dtype=np.float32), (r.integers(0, n, nnz), r.integers(0, n, nnz))),
                      shape=(n, n))
    w = mx.nd.ones((n, 2))  # 8 MB
    mx.nd.waitall()
    tracemalloc.start()
    a = mx.nd.sparse.csr_matrix(m)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(a, w)
    y.backward()
    g = w.grad
    assert g.stype == "row_sparse" and g.indices.shape[0] <= nnz
    mx.nd.sgd_update(w, g, lr=0.1, out=w)
    mx.nd.waitall()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 150 * 2**20, f"peak {peak >> 20} MB"
    colsum = np.bincount(m.indices, weights=m.data, minlength=n)
    rows = g.indices.asnumpy()[:50]
    np.testing.assert_allclose(w.asnumpy()[rows, 0], 1 - 0.1 * colsum[rows], rtol=1e-5)
    untouched = np.setdiff1d(np.arange(100), g.indices.asnumpy())
    assert (w.asnumpy()[untouched] == 1).all()


def test_scalar_assignment_follows_mxnet():
    """MXNet 1.9.1: a row_sparse x[:] = 2.0 stores every row (init.Constant on a row_sparse weight in
    Module relies on it); csr refuses non-zero scalars."""
    import mxasync as mx

    rsp = mx.nd.sparse.zeros("row_sparse", (4, 2))
    rsp[:] = 2.0
    assert rsp.stype == "row_sparse" and rsp.indices.asnumpy().tolist() == [0, 1, 2, 3]
    assert (rsp.asnumpy() == 2).all()
    csr = mx.nd.sparse.zeros("csr", (2, 2))
    with pytest.raises(mx.MXNetError, match="CSRNDArray.__setitem__: assigning the non-zero scalar 2.0"):
        csr[:] = 2.0


def test_module_initialises_a_row_sparse_weight_with_a_constant():
    import mxasync as mx

    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(10, 2), init=mx.init.Constant(2.0), stype="row_sparse")
    mod = mx.mod.Module(mx.sym.sparse.dot(x, w), label_names=None)
    mod.bind(data_shapes=[("data", (10, 10))])
    mod.init_params()
    assert (mod.get_params()[0]["weight"].asnumpy() == 2).all()
