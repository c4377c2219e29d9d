"""The box ops against MXNet 1.9.1 (fixtures_detection/mxnet_ref.npz, made by its make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

FIXTURE = Path(__file__).parent / "fixtures_detection" / "mxnet_ref.npz"


def _cases():
    with np.load(FIXTURE) as z:
        names = sorted({k.split("/")[0] for k in z.files})
        return {n: {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(n + "/")} for n in names}


CASES = _cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    arrays = CASES[case]
    spec = json.loads(str(arrays["spec"]))
    inputs = [mx.nd.array(arrays[f"in{i}"], dtype=arrays[f"in{i}"].dtype)
              for i in range(sum(k.startswith("in") for k in arrays))]
    outs = getattr(mx.nd._internal if spec["op"].startswith("_") else mx.nd, spec["op"])(*inputs, **spec["params"])
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), arrays[f"out{i}"], rtol=1e-5, atol=1e-5, err_msg=f"{case} out{i}")


def test_box_ops_have_zero_gradients_and_check_shapes():
    a = mx.nd.array(np.array([[0, 0, 2, 2], [1, 1, 2, 3]], np.float32))
    a.attach_grad()
    with mx.autograd.record():
        iou = mx.nd.contrib.box_iou(a, a)
    iou.backward()
    assert np.all(a.grad.asnumpy() == 0)
    with pytest.raises(mx.MXNetError, match="box_iou.*4 box coordinates"):
        mx.nd.contrib.box_iou(mx.nd.ones((2, 3)), a)
