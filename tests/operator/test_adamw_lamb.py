"""The AdamW and fused LAMB update ops and mx.optimizer.LAMB against MXNet 1.9.1 (fixtures recorded by
fixtures_adamw_lamb/make_fixtures.py): every input after the call, so the weights written through
``out=``, the in-place states and the skipped updates (rescale_grad NaN, inf or 0) are all checked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_adamw_lamb" / "mxnet_ref.npz")
OPS = sorted({k.split("/")[0] for k in REF.files if not k.startswith("opt_")})
OPTS = sorted({k.split("/")[0] for k in REF.files if k.startswith("opt_")})


def _tol(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", OPS)
def test_op_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    n = sum(1 for k in REF.files if k.startswith(f"{case}/in"))
    xs = [mx.nd.array(REF[f"{case}/in{i}"], dtype=REF[f"{case}/in{i}"].dtype) for i in range(n)]
    outs = [xs[i] for i in spec["weights"]]
    getattr(mx.nd._internal, spec["op"])(*xs, out=outs if len(outs) > 1 else outs[0], **spec["params"])
    for i, x in enumerate(xs):
        want = REF[f"{case}/after{i}"]
        assert x.dtype == want.dtype, f"{case}: input {i} dtype"
        np.testing.assert_allclose(x.asnumpy(), want, **_tol(want.dtype), err_msg=f"{case}: input {i} after the call")


@pytest.mark.parametrize("case", OPTS)
def test_lamb_optimizer_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    opt = mx.optimizer.LAMB(learning_rate=0.05, wd=0.01, rescale_grad=0.5, **spec["kwargs"])
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(REF[f"{case}/w0_{i}"], dtype=spec["dtype"]) for i in range(2)]
    for step in range(3):
        gs = [mx.nd.array(REF[f"{case}/grad{step}_{i}"], dtype=spec["dtype"]) for i in range(2)]
        if spec["fused"]:
            upd([0, 1], gs, ws)
        else:
            for i in range(2):
                upd(i, gs[i], ws[i])
    for i in range(2):
        want = REF[f"{case}/w_{i}"]
        np.testing.assert_allclose(ws[i].asnumpy(), want, **_tol(want.dtype), err_msg=f"{case}: weight {i}")


def test_skipped_update_without_out_returns_the_weight():
    w, g, m, v = (mx.nd.array([[0.5, -1.0]]) for _ in range(4))
    out = mx.nd.contrib.adamw_update(w, g, m, v, float("nan"), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), w.asnumpy())
    np.testing.assert_array_equal(m.asnumpy(), [[0.5, -1.0]])


def test_fused_forms_check_counts_and_types():
    xs = [mx.sym.var(f"x{i}") for i in range(11)]
    s = mx.sym._internal._multi_mp_adamw_update(*xs, lrs=(0.1, 0.1), wds=(0, 0), etas=(1, 1), num_weights=2)
    args, outs, aux = s.infer_type(x0="float16", x5="float16")
    assert outs == [np.float16, np.float16] and set(aux) == {np.float32}
    with pytest.raises(mx.base.MXNetError, match="lrs has 1 values"):
        mx.sym._internal._multi_adamw_update(*xs[:9], lrs=(0.1,), wds=(0, 0), etas=(1, 1), num_weights=2).infer_shape(
            x0=(2,))
    with pytest.raises(mx.base.MXNetError, match="needs 8 "):
        mx.nd._internal._multi_lamb_update(*[mx.nd.ones((2,))] * 7, learning_rates=(0.1, 0.1), wds=(0, 0),
                                           step_count=(1, 1), num_tensors=2)
