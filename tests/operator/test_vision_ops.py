"""The vision ops against MXNet 1.9.1 (fixtures_vision/mxnet_ref.npz, made by its make_fixtures.py): outputs,
and the gradients of the ops that have one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.image.resize import _opencv

FIXTURE = Path(__file__).parent / "fixtures_vision" / "mxnet_ref.npz"


def _cases():
    with np.load(FIXTURE) as z:
        names = sorted({k.split("/")[0] for k in z.files})
        return {n: {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(n + "/")} for n in names}


CASES = _cases()


def _run(arrays):
    spec = json.loads(str(arrays["spec"]))
    inputs = [mx.nd.array(arrays[f"in{i}"], dtype=arrays[f"in{i}"].dtype)
              for i in range(sum(k.startswith("in") for k in arrays))]
    for x in inputs:
        x.attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd._internal, spec["op"])(*inputs, **spec["params"])
    return inputs, outs if isinstance(outs, (list, tuple)) else [outs]


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    arrays = CASES[case]
    inputs, outs = _run(arrays)
    for i, o in enumerate(outs):
        want = arrays[f"out{i}"]
        assert o.dtype == want.dtype, f"{case} out{i}: dtype {o.dtype} != {want.dtype}"
        tol = dict(rtol=1e-5, atol=1e-4) if want.dtype != np.float64 else dict(rtol=1e-12, atol=1e-10)
        if case.startswith("resize_uint8_2") and _opencv() is not None:
            tol["atol"] = 1  # OpenCV itself on the host; its IPP bicubic is one grey level off in places
        np.testing.assert_allclose(o.asnumpy(), want, **tol, err_msg=f"{case} out{i}")
    if "head" in arrays:
        outs[0].backward(mx.nd.array(arrays["head"], dtype=arrays["head"].dtype))
        for i, x in enumerate(inputs):
            np.testing.assert_allclose(x.grad.asnumpy(), arrays[f"grad{i}"], rtol=1e-5, atol=1e-5,
                                       err_msg=f"{case} grad{i}")


@pytest.mark.parametrize("op", ["Proposal", "MultiProposal", "MultiBoxDetection"])
def test_detection_layers_have_zero_gradients(op):
    arrays = CASES[{"Proposal": "proposal", "MultiProposal": "multi_proposal", "MultiBoxDetection": "detection"}[op]]
    inputs, outs = _run(arrays)
    outs[0].backward()
    for x in inputs:
        assert np.all(x.grad.asnumpy() == 0)


def test_errors_name_the_op_and_shapes():
    with pytest.raises(mx.MXNetError, match="ROIAlign.*rois has shape \\(2, 4\\)"):
        mx.nd.contrib.ROIAlign(mx.nd.ones((1, 2, 4, 4)), mx.nd.ones((2, 4)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(mx.MXNetError, match="PSROIPooling.*6 channels"):
        mx.nd.contrib.PSROIPooling(mx.nd.ones((1, 6, 4, 4)), mx.nd.ones((2, 5)), spatial_scale=1.0, output_dim=2,
                                   pooled_size=2)
    with pytest.raises(mx.MXNetError, match="Proposal.*one image"):
        mx.nd.contrib.Proposal(mx.nd.ones((2, 6, 2, 2)), mx.nd.ones((2, 12, 2, 2)), mx.nd.ones((2, 3)),
                               scales=(1, 2, 3), ratios=(1,))


def test_symbol_names_and_like_input():
    data, like = mx.sym.Variable("data"), mx.sym.Variable("like")
    sym = mx.sym.contrib.BilinearResize2D(data, like, mode="like")
    assert sym.list_arguments() == ["data", "like"]
    assert sym.infer_shape(data=(1, 2, 3, 4), like=(1, 1, 6, 8))[1] == [(1, 2, 6, 8)]
    prop = mx.sym.contrib.Proposal(mx.sym.Variable("c"), mx.sym.Variable("b"), mx.sym.Variable("i"), output_score=True)
    assert [name.rsplit("_", 1)[1] for name in prop.list_outputs()] == ["output", "score"]


def test_npx_multibox_functions_run_the_contrib_ops():
    from mxasync import npx

    arrays = CASES["detection"]
    got = npx.multibox_detection(*[mx.np.array(arrays[f"in{i}"]) for i in range(3)])
    np.testing.assert_allclose(got.asnumpy(), arrays["out0"], rtol=1e-5, atol=1e-5)
    anchors = npx.multibox_prior(mx.np.zeros((1, 2, 3, 5)), sizes=(0.6, 0.3), ratios=(1, 2, 0.5))
    want = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 2, 3, 5)), sizes=(0.6, 0.3), ratios=(1, 2, 0.5))
    np.testing.assert_array_equal(anchors.asnumpy(), want.asnumpy())
