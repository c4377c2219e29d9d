"""``_contrib_group_adagrad_update`` and ``mx.optimizer.contrib.GroupAdaGrad`` against MXNet 1.9.1's results
(fixtures_optimizer_ops/make_group_adagrad.py): the weight and the history after the update(s)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_optimizer_ops" / "group_adagrad.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})
TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    w = mx.nd.array(REF[f"{case}/weight"])
    if spec["kind"] == "op":
        w = w.tostype(spec["weight_stype"])
        h = mx.nd.array(REF[f"{case}/history"])  # dense: mxasync keeps optimizer states dense
        g = mx.nd.array(REF[f"{case}/grad"]).tostype("row_sparse")
        mx.nd.contrib.group_adagrad_update(w, g, h, out=w, **spec["params"])
        assert w.stype == spec["weight_stype"]
    else:
        opt = mx.optimizer.contrib.GroupAdaGrad(**spec["params"])
        h = opt.create_state(0, w)
        for g in REF[f"{case}/grads"]:
            opt.update(0, w, mx.nd.array(g).tostype(spec["grad_stype"]), h)
    np.testing.assert_allclose(w.asnumpy(), REF[f"{case}/weight_after"], **TOL, err_msg=f"{case}: weight")
    np.testing.assert_allclose(h.asnumpy(), REF[f"{case}/history_after"], **TOL, err_msg=f"{case}: history")


def test_lazy_rows_dense_equals_row_sparse_and_symbol():
    rng = np.random.default_rng(0)
    w0, g = rng.uniform(-1, 1, (5, 4)).astype(np.float32), np.zeros((5, 4), np.float32)
    g[[1, 3]] = rng.uniform(-1, 1, (2, 4))
    outs = []
    for stype in ("default", "row_sparse"):
        w, h = mx.nd.array(w0), mx.nd.zeros((5, 1))
        mx.nd.contrib.group_adagrad_update(w, mx.nd.array(g).tostype(stype), h, out=w, lr=0.3)
        outs.append((w.asnumpy(), h.asnumpy()))
        np.testing.assert_array_equal(w.asnumpy()[[0, 2, 4]], w0[[0, 2, 4]])  # rows without gradient stay
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)
    s = mx.sym.contrib.group_adagrad_update(mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("h"), lr=0.3)
    args, outs, aux = s.infer_shape(w=(5, 4))  # the mutated history is listed as an aux state
    assert (args, outs, aux) == ([(5, 4), (5, 4)], [(5, 4)], [(5, 1)])


def test_errors_name_the_op_and_the_argument():
    w, g = mx.nd.zeros((4, 2)), mx.nd.ones((4, 2))
    with pytest.raises(mx.MXNetError, match="group_adagrad_update.*history has shape \\(4, 2\\).*needs \\(4, 1\\)"):
        mx.nd.contrib.group_adagrad_update(w, g, mx.nd.zeros((4, 2)), lr=0.1)
    with pytest.raises(mx.MXNetError, match="history must be dense"):
        mx.nd.contrib.group_adagrad_update(w, g.tostype("row_sparse"), mx.nd.zeros((4, 1)).tostype("row_sparse"),
                                           lr=0.1)
    opt = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
    with pytest.raises(AssertionError, match="Weight decay is not supported"):
        opt.update(0, w, g, opt.create_state(0, w))
    with pytest.raises(mx.MXNetError, match="must be 2-D"):
        opt.create_state(0, mx.nd.zeros((3,)))
