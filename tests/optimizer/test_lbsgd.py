"""mx.optimizer.LBSGD against MXNet 1.9.1 (fixtures by fixtures_lbsgd/make_fixtures.py): every warm-up
strategy, gradients gathered over batch_scale updates, momentum, begin_epoch; and what we do apart
from MXNet on purpose (a reused gradient array's first gradient counts; float16 master copies)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_lbsgd" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})


@pytest.mark.parametrize("case", CASES)
def test_lbsgd_matches_mxnet(case):
    kwargs = json.loads(str(REF[f"{case}/spec"]))
    opt = mx.optimizer.create("lbsgd", learning_rate=0.1, wd=0.01, rescale_grad=0.5, **kwargs)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(REF[f"{case}/w0_{i}"]) for i in range(2)]
    for step in range(7):
        for i in range(2):
            upd(i, mx.nd.array(REF[f"{case}/grad{step}_{i}"]), ws[i])
    for i in range(2):
        np.testing.assert_allclose(ws[i].asnumpy(), REF[f"{case}/w_{i}"], rtol=1e-5, atol=1e-6,
                                   err_msg=f"{case}: weight {i}")


def test_a_reused_gradient_array_keeps_its_first_gradient():
    opt = mx.optimizer.LBSGD(learning_rate=1.0, batch_scale=2, warmup_epochs=0)
    w, g = mx.nd.zeros((2,)), mx.nd.array([1.0, 2.0])
    opt.update(0, w, g, None)
    g[:] = mx.nd.array([3.0, 4.0])  # the next backward writes the same array
    opt.update(0, w, g, None)
    np.testing.assert_allclose(w.asnumpy(), [-4.0, -6.0])  # lr 1 * 2 (warmed up) * mean (2, 3)


def test_float16_weights_step_on_a_float32_master_copy():
    opt = mx.optimizer.LBSGD(learning_rate=0.1, momentum=0.9, multi_precision=True, warmup_epochs=0)
    w = mx.nd.array([1.0, -1.0], dtype="float16")
    state = opt.create_state_multi_precision(0, w)
    assert state[1].dtype == np.float32
    for _ in range(3):
        opt.update_multi_precision(0, w, mx.nd.array([0.5, 0.25], dtype="float16"), state)
    ref = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w32, mom = mx.nd.array([1.0, -1.0]), mx.nd.zeros((2,))
    for _ in range(3):
        ref.update(0, w32, mx.nd.array([0.5, 0.25]), mom)
    np.testing.assert_allclose(state[1].asnumpy(), w32.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), w32.asnumpy(), rtol=1e-3)


def test_batch_scale_must_be_positive():
    with pytest.raises(ValueError, match="batch_scale=0"):
        mx.optimizer.LBSGD(batch_scale=0)
