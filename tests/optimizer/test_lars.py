"""mx.optimizer.LARS against MXNet 1.9.1 (fixtures by fixtures_lars/make_fixtures.py): three steps with a
bias left unscaled, momentum correction under a scheduler, one index at a time and as lists, float16
weights under multi_precision."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_lars" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})
NAMES = {0: "fc1_weight", 1: "fc1_bias", 2: "fc2_weight"}


@pytest.mark.parametrize("case", CASES)
def test_lars_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    opt = mx.optimizer.LARS(learning_rate=0.2, wd=0.01, rescale_grad=0.5, eta=0.3, eps=1e-3,
                            param_idx2name=dict(NAMES), lr_scheduler=mx.lr_scheduler.FactorScheduler(1, 0.5),
                            **spec["kwargs"])
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(REF[f"{case}/w0_{i}"], dtype=spec["dtype"]) for i in range(3)]
    for step in range(3):
        gs = [mx.nd.array(REF[f"{case}/grad{step}_{i}"], dtype=spec["dtype"]) for i in range(3)]
        if spec["fused"]:
            upd([0, 1, 2], gs, ws)
        else:
            for i in range(3):
                upd(i, gs[i], ws[i])
    tol = dict(rtol=2e-3, atol=2e-3) if spec["dtype"] == "float16" else dict(rtol=1e-5, atol=1e-6)
    for i in range(3):
        np.testing.assert_allclose(ws[i].asnumpy(), REF[f"{case}/w_{i}"], **tol, err_msg=f"{case}: weight {i}")
