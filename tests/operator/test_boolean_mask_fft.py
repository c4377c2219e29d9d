"""contrib boolean_mask and index_copy against MXNet 1.9.1 (outputs and the gradients of every input; fixtures
by fixtures_boolean_mask/make_fixtures.py), and the GPU-only ops of MXNet 1.9.1 (count_sketch, fft, ifft)
by their definitions: the output sized from the mask's values, the interleaved complex layout, ifft(fft(x))."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_boolean_mask" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    spec = json.loads(str(REF[f"{case}/spec"]))
    n = sum(1 for k in REF.files if k.startswith(f"{case}/in"))
    xs = [mx.nd.array(REF[f"{case}/in{i}"], dtype=REF[f"{case}/in{i}"].dtype) for i in range(n)]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd.contrib, spec["op"])(*xs, **spec["params"])
    out.backward(mx.nd.array(REF[f"{case}/head"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{case}/out"], rtol=1e-6, err_msg=f"{case}: output")
    for i, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), REF[f"{case}/grad{i}"], rtol=1e-6, err_msg=f"{case}: grad {i}")


def test_boolean_mask_shape_follows_pending_values():
    index = mx.nd.zeros((4,))
    index[1:3] = 1  # a pending write: the op must wait for it before sizing its output
    out = mx.nd.contrib.boolean_mask(mx.nd.ones((4, 2)), index)
    assert out.shape == (2, 2)
    assert mx.nd.contrib.boolean_mask(mx.nd.ones((4, 2)), mx.nd.zeros((4,))).shape == (0, 2)


def test_boolean_mask_checks():
    with pytest.raises(mx.base.MXNetError, match="index has 3 entries"):
        mx.nd.contrib.boolean_mask(mx.nd.ones((4, 2)), mx.nd.ones((3,)))
    with pytest.raises(mx.base.MXNetError, match="only axis=0"):
        mx.nd.contrib.boolean_mask(mx.nd.ones((4, 2)), mx.nd.ones((4,)), axis=1)


def test_ifft_of_fft_is_d_times_x():
    x = mx.nd.random.uniform(shape=(3, 2, 2, 8))
    np.testing.assert_allclose(mx.nd.contrib.ifft(mx.nd.contrib.fft(x)).asnumpy(), 8 * x.asnumpy(), rtol=1e-5,
                               atol=1e-5)


def test_count_sketch_rejects_buckets_out_of_range():
    with pytest.raises(mx.base.MXNetError, match="outside"):
        mx.nd.contrib.count_sketch(mx.nd.ones((2, 3)), mx.nd.array([[0, 5, 1]]), mx.nd.ones((1, 3)),
                                   out_dim=5).asnumpy()
