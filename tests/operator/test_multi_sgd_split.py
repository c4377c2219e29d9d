"""The fused SGD-momentum update of big weights, split over the numpy backend's kernel threads,
gives the numbers of the unsplit update (and of the textbook formula)."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.backends.numpy import parallel
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.base import WRITE_INPLACE
from mxasync.operator.optimizer.multi_sgd import MultiSGDMomParam, multi_sgd_mom_update


def _run(weights, grads, moms, wd):
    p = MultiSGDMomParam(lrs=(0.1, 0.05), wds=(wd, wd), momentum=0.9, rescale_grad=0.5, num_weights=2)
    ins = [x for trio in zip(weights, grads, moms, strict=True) for x in trio]
    multi_sgd_mom_update(np, p, ins, [WRITE_INPLACE, WRITE_INPLACE], list(weights), run=NUMPY)  # as the op on cpu


@pytest.mark.parametrize("wd", [0.0, 1e-3])
def test_split_update_matches_unsplit_and_the_formula(monkeypatch, wd):
    rng = np.random.default_rng(3)
    shapes = [(37, 29), (1001,)]
    w0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    g = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    m0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]

    def run(split: bool):
        monkeypatch.setattr(parallel, "_NTHREADS", 3 if split else 1)
        monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 if split else 1 << 40)
        monkeypatch.setattr(parallel, "CHECK_LOAD", False)
        w, m = [x.copy() for x in w0], [x.copy() for x in m0]
        _run(w, g, m, wd)
        return w, m

    splits = []
    real_split = parallel.split
    monkeypatch.setattr(parallel, "split", lambda fn, n, **kw: (splits.append(n), real_split(fn, n, **kw))[1])
    w1, m1 = run(False)
    assert splits == []
    w2, m2 = run(True)
    assert splits == [37 * 29, 1001]  # both weights took the split path
    for lr, a, b, ma, mb, w, gg, m in zip((0.1, 0.05), w1, w2, m1, m2, w0, g, m0, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ma, mb, rtol=1e-6, atol=1e-6)
        want_m = 0.9 * m - lr * (0.5 * gg + wd * w)
        np.testing.assert_allclose(mb, want_m, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, w + want_m, rtol=1e-5, atol=1e-6)
