"""multi_mp_sgd_* and preloaded_multi_* against MXNet 1.9.1 (fixtures_multi_sgd_forms/make_fixtures.py):
outputs, states updated in place, shapes, types and errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.operator import get_op

CASES = load_cases(Path(__file__).parent / "fixtures_multi_sgd_forms" / "mxnet_ref.npz")


def _tol(dtype):
    return dict(rtol=1e-3, atol=1e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in numbered(a, "in")]
    want = numbered(a, "out")
    outs = [mx.nd.zeros(w.shape, dtype=w.dtype) for w in want]
    getattr(mx.nd, spec["op"])(*arrays, out=outs, **spec["params"])
    for o, w in zip(outs, want, strict=True):
        assert o.dtype == w.dtype
        np.testing.assert_allclose(o.asnumpy(), w, **_tol(w.dtype), err_msg=case)
    for i, (x, w) in enumerate(zip(arrays, numbered(a, "after"), strict=True)):
        np.testing.assert_allclose(x.asnumpy(), w, **_tol(w.dtype), err_msg=f"{case}: input {i} after the call")


def test_in_place_on_the_weights_and_returned_outputs():
    a = CASES["pre_sgd_mom"]
    xs = numbered(a, "in")
    arrays = [mx.nd.array(x) for x in xs]
    weights = arrays[0:6:3]
    mx.nd.preloaded_multi_sgd_mom_update(*arrays, out=weights, **a["spec"]["params"])
    for w, want in zip(weights, numbered(a, "out"), strict=True):
        np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)
    new = mx.nd.multi_mp_sgd_update(*[mx.nd.array(x, dtype=x.dtype) for x in numbered(CASES["mp_sgd"], "in")],
                                    **CASES["mp_sgd"]["spec"]["params"])
    assert [o.dtype for o in new] == [np.float16] * 3


def test_arguments_types_and_errors():
    prop = get_op("preloaded_multi_mp_sgd_mom_update").prepare(num_weights=2)
    assert prop.list_arguments() == ["weight_0", "grad_0", "mom_0", "weight32_0", "weight_1", "grad_1", "mom_1",
                                     "weight32_1", "lrs", "wds"]
    assert prop.mutate_inputs() == [2, 3, 6, 7]
    ins, outs, _ = prop.infer_type([np.float16] + [None] * 9)
    assert ins[:4] == [np.float16, np.float16, np.float32, np.float32] and outs == [np.float16, None]
    assert prop.infer_shape([(2, 3)] + [None] * 4 + [(4,)] + [None] * 4)[0][-2:] == [(2,), (2,)]
    with pytest.raises(MXAsyncError, match=r"lrs has shape \(3,\); it must be \(2,\)"):
        prop.infer_shape([(2, 3)] * 8 + [(3,), (2,)])
    with pytest.raises(MXAsyncError, match="needs 10 .*then lrs and wds"):
        prop.infer_shape([(2, 3)] * 8)
    mp = get_op("multi_mp_sgd_update").prepare(lrs=(0.1,), wds=(0.0,), num_weights=1)
    assert mp.list_arguments() == ["weight_0", "grad_0", "weight32_0"] and mp.mutate_inputs() == [2]
    s = mx.sym.preloaded_multi_sgd_update(*[mx.sym.Variable(n) for n in ("w", "g", "lr", "wd")], num_weights=1)
    assert s.infer_shape(w=(3,))[0] == [(3,), (3,), (1,), (1,)]
