"""Learning-rate schedulers against MXNet 1.9.1's sequences (fixtures) and hand-worked values."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from mxasync import lr_scheduler

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "optimizer", "fixtures", "schedulers.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURES.files})


@pytest.mark.parametrize("case", CASES)
def test_sequence_matches_mxnet(case):
    cls, kwargs = json.loads(str(FIXTURES[f"{case}/config"]))
    sched = getattr(lr_scheduler, cls)(**kwargs)
    np.testing.assert_allclose([sched(n) for n in range(20)], FIXTURES[f"{case}/lrs"], rtol=1e-12)


def test_hand_worked_values():
    sched = lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    np.testing.assert_allclose([sched(n) for n in range(1, 7)], [1, 1, 0.1, 0.1, 0.01, 0.01])
    cos = lr_scheduler.CosineScheduler(max_update=10, base_lr=2.0)
    assert cos(0) == 2.0 and cos(5) == pytest.approx(1.0) and cos(10) == pytest.approx(0.0) and cos(20) == cos(10)
    warm = lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2)
    assert [warm(n) for n in range(4)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert lr_scheduler.FactorScheduler(step=1, factor=0.1, stop_factor_lr=0.05, base_lr=1.0)(10) == 0.05


@pytest.mark.parametrize("kwargs", [dict(step=0), dict(step=2, factor=2.0), dict(step=2, warmup_mode="cubic"),
                                    dict(step=2, base_lr=0.1, warmup_begin_lr=0.5)])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        lr_scheduler.FactorScheduler(**kwargs)
    with pytest.raises(ValueError):
        lr_scheduler.MultiFactorScheduler(step=[3, 2])
