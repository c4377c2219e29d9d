"""The ops of ``ops_linalg.py`` and ``ops_nd_index.py`` against the real MXNet 1.9.1, and their front ends.

``fixtures_linalg/mxnet_ref.npz`` holds float64 outputs and autograd gradients recorded from
MXNet (``fixtures_linalg/make_fixtures.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError

FIXTURE = Path(__file__).parent / "fixtures_linalg" / "mxnet_ref.npz"
RTOL, ATOL = 1e-6, 1e-8


CASES = load_cases(FIXTURE)


def _negative_part(inputs, head):
    """The gradient contributions of the negative indices, which MXNet's gather_nd backward leaves out."""
    data, idx = inputs
    idx = idx.astype(int)
    g = np.zeros_like(data)
    for y in np.ndindex(*idx.shape[1:]):
        i = idx[(slice(None),) + y]
        if (i < 0).any():
            g[tuple(i)] += head[y]
    return g


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs, heads = numbered(a, "in"), numbered(a, "head")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    expected = numbered(a, "out")
    assert len(outs) == len(expected), case
    for o, e in zip(outs, expected, strict=True):
        assert o.shape == e.shape, f"{case}: {o.shape} != {e.shape}"
        np.testing.assert_allclose(o, e, rtol=RTOL, atol=ATOL, err_msg=case)
    if not spec["grads"]:
        return
    grads = backward(spec["op"], spec["params"], inputs, outs, heads)
    if spec["op"] == "gather_nd":  # MXNet's backward drops negative indices (its forward wraps them); ours adds
        grads[0] = grads[0] - _negative_part(inputs, heads[0])  # them, as the numeric gradient does
    for i in spec["grads"]:
        np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=RTOL, atol=ATOL, err_msg=f"{case}: grad {i}")


@pytest.mark.parametrize("op,params,shapes,msg", [
    ("_linalg_gemm2", {}, [(2, 3), (4, 5)],
     r"_linalg_gemm2: A has shape \(2, 3\) and B \(4, 5\): inner dimensions 3 and 4 differ"),
    ("_linalg_gemm", {}, [(2, 3), (3, 4), (2, 5)], r"_linalg_gemm: C has shape \(2, 5\) but A \(2, 3\) times B"),
    ("_linalg_gemm2", {}, [(2, 2, 3), (3, 3, 4)], r"_linalg_gemm2: A has shape \(2, 2, 3\) and B \(3, 3, 4\): the "
     r"batch axes"),
    ("_linalg_gemm2", dict(axis=-1), [(2, 3), (3, 4)], r"_linalg_gemm2: axis=-1 is out of range for the row axis"),
    ("_linalg_potrf", {}, [(2, 3)], r"_linalg_potrf: A has shape \(2, 3\); it needs square matrices"),
    ("_linalg_det", {}, [(3,)], r"_linalg_det: A has shape \(3,\); it needs at least 2 dimensions"),
    ("_linalg_trsm", {}, [(3, 3), (2, 3)], r"_linalg_trsm: A has shape \(3, 3\) and B \(2, 3\): the triangular "
     r"matrix of size 3 does not match the 2 rows of B"),
    ("_linalg_gelqf", {}, [(3, 2)], r"_linalg_gelqf: A has shape \(3, 2\): gelqf needs at most as many rows"),
    ("_linalg_maketrian", {}, [(5,)], r"_linalg_maketrian: A has shape \(5,\): its last axis of size 5 is not a "
     r"triangular number"),
    ("_linalg_extractdiag", dict(offset=3), [(3, 3)], r"_linalg_extractdiag: offset=3 selects no diagonal"),
    ("gather_nd", {}, [(3, 4), (3, 2)], r"gather_nd: indices has shape \(3, 2\): its first axis M=3 must be between "
     r"1 and the 2 dimensions of data \(3, 4\)"),
    ("scatter_nd", dict(shape=(3, 4)), [(3,), (2, 2)], r"scatter_nd: data has shape \(3,\) but indices \(2, 2\) and "
     r"shape=\(3, 4\) need \(2,\)"),
])
def test_shape_errors(op, params, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prepare(op, params).infer_shape(shapes)


def test_runtime_errors_name_the_op():
    with pytest.raises(mx.MXNetError, match=r"gather_nd: index 5 is out of bounds for axis 0 with size 3"):
        mx.nd.gather_nd(mx.nd.ones((3, 4)), mx.nd.array([[5], [0]])).asnumpy()
    with pytest.raises(mx.MXNetError, match=r"_linalg_potrf: .*"):
        mx.nd.linalg.potrf(mx.nd.array([[-1.0, 0], [0, 1]])).asnumpy()
    with pytest.raises(mx.MXNetError, match=r"_linalg_inverse: .*[Ss]ingular"):
        mx.nd.linalg.inverse(mx.nd.array([[1.0, 2], [2, 4]])).asnumpy()


def test_namespaces():
    names = {"gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "sumlogdiag", "syrk", "gelqf", "extractdiag",
             "makediag", "extracttrian", "maketrian", "inverse", "det", "slogdet"}
    assert names <= set(mx.nd.linalg.__all__) and names <= set(mx.sym.linalg.__all__)
    a, b = mx.nd.array(np.arange(6.0).reshape(2, 3)), mx.nd.array(np.ones((3, 2)))
    np.testing.assert_allclose(mx.nd.linalg.gemm2(a, b, False, False, 2.0).asnumpy(), 2 * np.arange(6.0)
                               .reshape(2, 3) @ np.ones((3, 2)))
    np.testing.assert_allclose(mx.nd.linalg_gemm2(a, b).asnumpy(), mx.nd._internal._linalg_gemm2(a, b).asnumpy())
    x = mx.sym.Variable("x")
    q, lo = mx.sym.linalg.gelqf(x)
    assert mx.sym.Group([q, lo]).infer_shape(x=(2, 3))[1] == [(2, 3), (2, 2)]
    out = mx.sym.linalg.gemm2(x, mx.sym.Variable("y"), transpose_b=True)
    assert out.infer_shape(x=(4, 2, 3), y=(4, 5, 3))[1] == [(4, 2, 5)]
    assert mx.sym.gather_nd(x, mx.sym.Variable("i")).infer_shape(x=(3, 4), i=(1, 5))[1] == [(5, 4)]


def test_gather_nd_autograd_adds_duplicates():
    data = mx.nd.array(np.arange(12.0).reshape(3, 4))
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.gather_nd(data, mx.nd.array([[0, 0, 1], [1, 1, 2]]))
    out.backward()
    want = np.zeros((3, 4))
    want[0, 1], want[1, 2] = 2, 1
    np.testing.assert_array_equal(data.grad.asnumpy(), want)


def test_scatter_set_nd_keeps_the_rest():
    lhs = mx.nd.ones((2, 2))
    out = mx.nd._internal._scatter_set_nd(lhs, mx.nd.array([2, 3, 0]), mx.nd.array([[1, 1, 0], [0, 1, 0]]), shape=(2, 2))
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1], [2, 3]])
