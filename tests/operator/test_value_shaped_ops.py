"""``_npi_unique``, ``_npi_bincount`` and ``_npx_nonzero`` (mxasync/operator/numpy/value_shaped.py): ops whose output
shapes depend on the input values. Imperatively and inside a hybridized block (which then runs op
by op, as MXNet 1.9.1's CachedOp does for dynamic shapes) they give NumPy's values, in MXNet 1.9.1's
dtypes (unique's extra outputs int64; bincount in data's dtype, the weights' with weights), with a
zero gradient as MXNet's."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.gluon import HybridBlock
from mxasync.operator import get_op

UNIQUE = [((5, 4), "int32", (True, True, True, None)), ((), "float32", (True, True, True, None)),
          ((6,), "float64", (False, False, False, None)), ((5, 3), "int8", (True, False, True, 1)),
          ((5, 0, 4), "float32", (True, True, True, None)), ((4, 3), "int64", (False, True, False, 0))]
BINCOUNT = [("int32", None, 0), ("int8", "float32", 5), ("int64", "int32", 0), ("uint8", "float16", 20)]


class _Unique(HybridBlock):
    def __init__(self, flags):
        super().__init__()
        self.flags = flags

    def hybrid_forward(self, F, x):
        return F.np.unique(x, *self.flags)


class _Bincount(HybridBlock):
    def __init__(self, minlength):
        super().__init__()
        self.minlength = minlength

    def hybrid_forward(self, F, x, *w):
        return F.np.bincount(x, w[0] if w else None, self.minlength)


def _as_list(res):
    return [o.asnumpy() for o in res] if isinstance(res, (list, tuple)) else [res.asnumpy()]


def _check_unique(got, x, flags):
    want = np.unique(x, *flags)
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape
        assert g.dtype == (x.dtype if k == 0 else np.int64)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("shape,dtype,flags", UNIQUE)
def test_unique_matches_numpy(shape, dtype, flags, hybridize):
    mx.npx.set_np()
    try:
        block = _Unique(flags)
        if hybridize:
            block.hybridize()
        rng = np.random.default_rng(0)
        for lo, hi in ((-3, 3), (-9, 9)):  # the second call has more distinct values: a new output size
            x = rng.integers(lo, hi, size=shape).astype(dtype)
            _check_unique(_as_list(block(mx.np.array(x, dtype=dtype))), x, flags)
            _check_unique(_as_list(mx.np.unique(mx.np.array(x, dtype=dtype), *flags)), x, flags)
    finally:
        mx.npx.reset_np()


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("dtype,wtype,minlength", BINCOUNT)
def test_bincount_matches_numpy(dtype, wtype, minlength, hybridize):
    mx.npx.set_np()
    try:
        block = _Bincount(minlength)
        if hybridize:
            block.hybridize()
        rng = np.random.default_rng(1)
        for n, hi in ((0, 1), (7, 4), (9, 30)):  # empty, then longer results
            x = rng.integers(0, hi, size=n).astype(dtype)
            w = None if wtype is None else rng.uniform(0, 3, size=n).astype(wtype)
            args = [mx.np.array(x, dtype=dtype)] + ([] if w is None else [mx.np.array(w, dtype=wtype)])
            for got in (block(*args), mx.np.bincount(*args, minlength=minlength) if w is not None
                        else mx.np.bincount(args[0], minlength=minlength)):
                want = np.bincount(x, w, minlength)
                assert got.shape == want.shape
                assert got.dtype == np.dtype(wtype or dtype)  # MXNet 1.9.1's result dtype
                np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=1e-2 if wtype == "float16"
                                           else 1e-6)
    finally:
        mx.npx.reset_np()


def test_shapes_unknown_until_values():
    assert get_op("_npi_unique").prepare(return_index=True, return_counts=True).infer_shape([(4, 2)])[1] == [None] * 3
    assert get_op("_npi_bincount").prepare(has_weights=True).infer_shape([(4,), (4,)])[1] == [None]


def test_hybridized_graph_runs_op_by_op_with_zero_gradient():
    """Ops around them in the same block, under autograd: weights get zeros (as MXNet 1.9.1)."""

    class Net(HybridBlock):
        def hybrid_forward(self, F, x, w):
            return F.np.bincount(x, w * 2, 3) + 1, F.np.unique(x) * 3

    mx.npx.set_np()
    try:
        net = Net()
        net.hybridize()
        x = mx.np.array([0, 2, 2, 4], dtype="int32")
        w = mx.np.array([1.0, 2, 3, 4])
        w.attach_grad()
        with mx.autograd.record():
            c, u = net(x, w)
        c.backward()
        np.testing.assert_allclose(c.asnumpy(), [3, 1, 11, 1, 9])
        np.testing.assert_array_equal(u.asnumpy(), [0, 6, 12])
        np.testing.assert_array_equal(w.grad.asnumpy(), 0)
    finally:
        mx.npx.reset_np()


@pytest.mark.parametrize("data,dtype,msg", [([1, -2], "int32", "non-negative"), ([1.0, 2.0], "float32", "integer"),
                                            ([[1, 2]], "int32", "1-d")])
def test_bincount_errors(data, dtype, msg):
    with pytest.raises(MXAsyncError, match=msg):
        mx.np.bincount(mx.np.array(data, dtype=dtype))


def test_bincount_rejects_negative_minlength():
    with pytest.raises(ValueError, match="minlength"):
        mx.np.bincount(mx.np.array([1, 2], dtype="int32"), minlength=-1)


class _Nonzero(HybridBlock):
    def hybrid_forward(self, F, x):
        return F.npx.nonzero(x) * 2


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("x", [[[0, 1.5], [2, 0]], 3.0, 0.0, np.zeros((2, 0, 3)), [[[0, 1], [1, 1]]]])
def test_npx_nonzero_rows_of_indices_with_zero_gradient(x, hybridize):
    """MXNet 1.9.1: (count, ndim) int64 rows, a 0-d input counted as 1-d, a zero gradient, and inside
    a hybridized block (op by op)."""
    x = np.asarray(x, dtype=np.float32)
    mx.npx.set_np()
    try:
        net = _Nonzero()
        if hybridize:
            net.hybridize()
        a = mx.np.array(x)
        a.attach_grad()
        with mx.autograd.record():
            y = net(a)
            loss = (a * 3).sum() + y.astype("float32").sum()  # nothing flows back through nonzero
        loss.backward()
        assert y.dtype == np.int64
        np.testing.assert_array_equal(y.asnumpy(), np.argwhere(np.atleast_1d(x)) * 2)
        np.testing.assert_array_equal(a.grad.asnumpy(), np.full(x.shape, 3.0))
    finally:
        mx.npx.reset_np()


@pytest.mark.parametrize("x", [[[0, 1.5], [2, 0]], [0, 0, 3], np.zeros((2, 0))])
def test_np_where_with_condition_only_is_nonzero(x):
    """``np.where(c)`` is ``np.nonzero(c)``: one int64 index array per axis."""
    x = np.asarray(x, dtype=np.float32)
    got = mx.np.where(mx.np.array(x))
    want = np.where(x)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g.asnumpy(), w)
