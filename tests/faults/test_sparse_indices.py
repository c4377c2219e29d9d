"""Issue 34, items 4 and 5 (sparse): csr / row_sparse indices are checked by MXNet's ``check_format``
rules (in range, counts consistent; sorted on ``.params`` load and by ``check_format``) on construction,
on ``.params`` load and in every op that
takes row indices; a refusal is an ``MXNetError`` naming the array. On main an out-of-range csr column
reached SciPy's native code (``dot`` read outside its operand; 2**40 segfaulted), a negative row
updated the last row, and ``retain`` / ``row_sparse_pull`` / ``Embedding(sparse_grad=True)`` clipped."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync.ndarray._serialization import ArrayRecord, save_arrays
from mxasync.operator.sparse.formats import SparseValue

pytestmark = pytest.mark.fault


@pytest.mark.parametrize("indices, indptr, message", [
    ([0, 2**40], [0, 1, 2], r"csr column index 1099511627776 \(stored value 1, row 1\) is out of range \[0, 4\)"),
    ([0, -1], [0, 1, 2], r"csr column index -1 .* out of range"),
    ([0, 1], [0, 1, 3], r"csr indptr must start at 0 and end at the 2 stored values"),
    ([0, 1], [0, 2, 1], r"csr indptr must start at 0 and end at the 2 stored values, got 0 \.\.\. 1"),
    ([0, 1], [0, 3, 2], r"csr indptr decreases at row 1 \(3 then 2\)"),
])
def test_csr_matrix_checks_its_indices(indices, indptr, message):
    with pytest.raises(mx.MXNetError, match=r"csr_matrix: " + message):
        mx.nd.sparse.csr_matrix((np.ones(2, np.float32), indices, indptr), shape=(2, 4))


@pytest.mark.parametrize("indices, message", [
    ([2, 1], r"csr column indices of row 0 are not sorted and unique \(2 then 1\)"),
    ([1, 1], r"csr column indices of row 0 are not sorted and unique \(1 then 1\)"),
])
def test_csr_columns_out_of_order_are_stored_as_given_and_check_format_names_them(indices, message):
    """MXNet's csr_matrix keeps a row's columns in the given order (its test_sparse_operator builds such
    arrays); the values are still the ones given, and check_format() refuses the order."""
    a = mx.nd.sparse.csr_matrix((np.array([1.0, 2.0], np.float32), indices, [0, 2, 2]), shape=(2, 4))
    want = np.zeros((2, 4), np.float32)
    np.add.at(want[0], indices, [1.0, 2.0])
    np.testing.assert_array_equal(a.asnumpy(), want)
    with pytest.raises(mx.MXNetError, match=r"check_format: " + message):
        a.check_format()


def test_a_scipy_matrix_with_a_column_out_of_range_never_reaches_scipy():
    sp = pytest.importorskip("scipy.sparse")
    m = sp.csr_matrix((np.ones(2), np.array([0, 2**40]), np.array([0, 1, 2])), shape=(2, 4))  # scipy takes it
    with pytest.raises(mx.MXNetError, match=r"csr_matrix \(from a SciPy matrix\): csr column index 1099511627776"):
        mx.nd.sparse.csr_matrix(m)


def test_row_sparse_array_refuses_a_negative_row():
    with pytest.raises(mx.MXNetError, match=r"row_sparse_array: row_sparse row index -1 \(position 0\) is out of "
                                            r"range \[0, 5\)"):
        mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [-1, 1]), shape=(5, 3))
    with pytest.raises(mx.MXNetError, match=r"row_sparse_array: .*index 1 \(position 1\)|not sorted and unique"):
        mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 1]), shape=(5, 3))


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_a_params_file_with_bad_indices_is_refused_naming_the_array(tmp_path, stype):
    path = str(tmp_path / "net.params")
    if stype == "csr":
        value = SparseValue("csr", (2, 4), np.ones(2, np.float32), np.array([0, 2**40]), np.array([0, 1, 2]))
    else:
        value = SparseValue("row_sparse", (5, 3), np.ones((2, 3), np.float32), np.array([3, 9]))
    save_arrays(path, {"arg:w": ArrayRecord(value, (1, 0)), "arg:b": ArrayRecord(np.ones(2, np.float32), (1, 0))})
    with pytest.raises(mx.MXNetError, match=rf"net\.params: array 'arg:w' \({stype}\): .*out of range"):
        mx.nd.load(path)


def test_a_valid_sparse_params_file_loads(tmp_path):
    path = str(tmp_path / "ok.params")
    c = mx.nd.sparse.csr_matrix((np.ones(3, np.float32), [0, 3, 1], [0, 2, 3]), shape=(2, 4))
    r = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 4]), shape=(5, 3))
    mx.nd.save(path, {"c": c, "r": r})
    back = mx.nd.load(path)
    np.testing.assert_array_equal(back["c"].asnumpy(), c.asnumpy())
    np.testing.assert_array_equal(back["r"].asnumpy(), r.asnumpy())


@pytest.mark.parametrize("rows", [[1, 7], [-1, 1]])
def test_retain_refuses_rows_outside_the_array(rows):
    r = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 3]), shape=(5, 3))
    with pytest.raises(mx.MXNetError, match=rf"_sparse_retain: indices for data of shape \(5, 3\): row index "
                                            rf"{rows[0] if rows[0] < 0 else rows[1]} .*is not a row of 0\.\.4"):
        r.retain(mx.nd.array(rows, dtype="int64")).asnumpy()


def test_row_sparse_pull_refuses_rows_outside_the_key():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones((5, 2)).tostype("row_sparse"))
    out = mx.nd.sparse.zeros("row_sparse", (5, 2))
    with pytest.raises(mx.MXNetError, match=r"row index 9 .*is not a row of 0\.\.4"):
        kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([1, 9], dtype="int64"))
        out.asnumpy()


def test_embedding_sparse_grad_refuses_data_out_of_bound():
    """MXNet 1.9.1: 'Embedding input contains data out of bound' at backward; the forward clips in both."""
    w = mx.nd.ones((5, 2))
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        y = mx.nd.Embedding(mx.nd.array([1, 7]), w, input_dim=5, output_dim=2, sparse_grad=True)
    with pytest.raises(mx.MXNetError, match=r"Embedding\(sparse_grad=True\) backward: data for input_dim=5: "
                                            r"row index 7.0 \(position 1\) is not a row of 0\.\.4"):
        y.backward()
        w.grad.asnumpy()
