"""linalg.syevd (MXNet's eigenvector rows and signs) and potrf/potri with ``lower=False`` against MXNet 1.9.1:
outputs and autograd gradients (fixtures by fixtures_syevd/make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_syevd" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    a = REF[f"{case}/in0"]
    tol = dict(rtol=1e-4, atol=1e-5) if a.dtype == np.float32 else dict(rtol=1e-8, atol=1e-10)
    x = mx.nd.array(a, dtype=a.dtype)
    x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd.linalg, spec["op"])(x, **spec["params"])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
    n = len(outs)
    mx.autograd.backward(outs, [mx.nd.array(REF[f"{case}/head{i}"], dtype=a.dtype) for i in range(n)])
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), REF[f"{case}/out{i}"], **tol, err_msg=f"{case}: output {i}")
    np.testing.assert_allclose(x.grad.asnumpy(), REF[f"{case}/grad0"], **tol, err_msg=f"{case}: gradient")


def test_syevd_rows_are_eigenvectors():
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    u, lam = (t.asnumpy() for t in mx.nd.linalg.syevd(mx.nd.array(a, dtype="float64")))
    np.testing.assert_allclose(u @ a, lam[:, None] * u, atol=1e-12)
    assert (np.diff(lam) > 0).all()
