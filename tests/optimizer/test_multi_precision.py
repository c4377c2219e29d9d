"""``multi_precision=True``: float16 and bfloat16 weights step on a float32 master copy (MXNet 1.9.1 does this
for float16; bfloat16 is mxasync's extension), for SGD, NAG, Adam and LAMB, single and fused updates."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import optimizer as opt_mod

KWARGS = {"sgd": {"momentum": 0.9}, "nag": {"momentum": 0.9}, "adam": {}, "lamb": {}}


def _master(name: str, state):
    return state[1] if name in ("sgd", "nag") else state[0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(KWARGS))
def test_master_weight_accumulates_steps_below_the_weights_resolution(name: str, dtype: str) -> None:
    opt = opt_mod.create(name, learning_rate=1e-4, multi_precision=True, **KWARGS[name])
    upd = opt_mod.get_updater(opt)
    w = mx.nd.array(np.full(4, 1.0), dtype=dtype)
    for _ in range(5):
        upd(0, mx.nd.array(np.full(4, 1e-2), dtype=dtype), w)
    master = _master(name, upd.states[0])
    assert master.dtype == np.float32 and np.dtype(w.dtype).name == dtype
    m = master.asnumpy()
    # each step is below the weight type's resolution at 1.0; the master moves, the weight is its rounding
    assert m[0] < 1.0
    assert w.asnumpy().astype(np.float32)[0] == m.astype(dtype).astype(np.float32)[0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sgd", "lamb"])
def test_fused_updates_match_single_ones(name: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(5).astype(np.float32) for _ in range(3)]
    gs = [rng.standard_normal(5).astype(np.float32) for _ in range(3)]
    results = []
    for fused in (True, False):
        opt = opt_mod.create(name, learning_rate=0.1, multi_precision=True, **KWARGS[name])
        opt.aggregate_num = 4 if fused else 1
        upd = opt_mod.get_updater(opt)
        weights = [mx.nd.array(w, dtype=dtype) for w in ws]
        for _ in range(2):
            upd(list(range(3)), [mx.nd.array(g, dtype=dtype) for g in gs], weights)
        results.append([_master(name, upd.states[i]).asnumpy() for i in range(3)])
    # MXNet's fused LAMB takes the trust ratio's weight norm from the low-precision weight, its single
    # update from the float32 master: the two agree to the weight type's rounding of that norm
    rtol = 1e-2 if name == "lamb" else 1e-6
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)


def test_bfloat16_without_multi_precision_warns() -> None:
    with pytest.warns(UserWarning, match="Accumulating with bfloat16"):
        opt_mod.SGD(momentum=0.9).create_state_multi_precision(0, mx.nd.zeros((2,), dtype="bfloat16"))
