"""The optimizer update ops against MXNet 1.9.1's results (fixtures recorded by
fixtures_optimizer_ops/make_fixtures.py): the output and every input after the call, so the
in-place state updates are checked as well as the new weight."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_optimizer_ops" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})


def _tol(dtype):
    return dict(rtol=1e-2, atol=1e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    n = sum(1 for k in REF.files if k.startswith(f"{case}/in"))
    xs = [mx.nd.array(REF[f"{case}/in{i}"], dtype=REF[f"{case}/in{i}"].dtype) for i in range(n)]
    out = getattr(mx.nd, spec["op"])(*xs, **spec["params"])
    want = REF[f"{case}/out"]
    assert out.dtype == want.dtype, f"{case}: output dtype"
    np.testing.assert_allclose(out.asnumpy(), want, **_tol(want.dtype), err_msg=f"{case}: output")
    for i, x in enumerate(xs):
        np.testing.assert_allclose(x.asnumpy(), REF[f"{case}/after{i}"], **_tol(x.dtype),
                                   err_msg=f"{case}: input {i} after the call")


@pytest.mark.parametrize("op,n,mutated", [
    ("signsgd_update", 2, [0]), ("signum_update", 3, [0, 2]), ("ftml_update", 5, [0, 2, 3, 4]),
    ("ftrl_update", 4, [0, 2, 3]),
])
def test_out_weight_mutates_only_weight_and_states(op, n, mutated):
    rng = np.random.default_rng(0)
    arrays = [mx.nd.array(rng.uniform(0.1, 1, (2, 3))) for _ in range(n)]
    before = [a.asnumpy() for a in arrays]
    params = dict(lr=0.01, wd=1e-3, rescale_grad=0.1)
    if op == "ftml_update":
        params["t"] = 3
    getattr(mx.nd, op)(*arrays, out=arrays[0], **params)
    for i, (a, b) in enumerate(zip(arrays, before, strict=True)):
        changed = not np.array_equal(a.asnumpy(), b)
        assert changed == (i in mutated), f"{op}: input {i} changed={changed}"


def test_mixed_precision_types_and_symbolic_inference():
    w = mx.sym.Variable("w")
    g = mx.sym.Variable("g")
    m = mx.sym.Variable("m")
    w32 = mx.sym.Variable("w32")
    s = mx.sym.mp_sgd_mom_update(w, g, m, w32, lr=0.1)
    args, outs, aux = s.infer_type(w=np.float16)  # mutated inputs (mom, weight32) are listed as aux states
    assert args + aux == [np.float16, np.float16, np.float32, np.float32] and outs == [np.float16]
    p1 = mx.sym.mp_lamb_update_phase1(w, g, m, mx.sym.Variable("v"), w32, t=1, wd=0.0)
    assert p1.infer_type(w=np.float16)[1] == [np.float32]
