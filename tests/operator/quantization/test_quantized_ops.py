"""The quantized ops against MXNet 1.9.1's own outputs (tests/fixtures/quantization/ops.npz, made by
make_fixtures.py there), bit for bit, and the exactness argument of the int8 GEMM path."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import mxasync as mx
from mxasync.operator.quantization import _int_gemm

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "quantization"
MANIFEST = json.loads((FIXTURES / "ops.json").read_text())
# outputs that may differ in the last bit: the KL divergence's float32 logs (numpy's log vs glibc's logf);
# the threshold chosen from them is compared exactly
LAST_BIT = {("_contrib_calibrate_entropy", 1)}


@pytest.fixture(scope="module")
def arrays():
    with np.load(FIXTURES / "ops.npz") as d:
        return dict(d)


# one entropy search (2 s) runs by default, the other with the slow tests
CASES = [pytest.param(c, marks=pytest.mark.slow) if c == "calibrate_entropy_255" else c for c in sorted(MANIFEST)]


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case, arrays):
    m = MANIFEST[case]
    inputs = [mx.nd.array(a, dtype=a.dtype) for a in (arrays[f"{case}/in{i}"] for i in range(m["num_inputs"]))]
    outs = getattr(mx.nd.contrib, m["op"][len("_contrib_"):])(*inputs, **m["params"])
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    assert len(outs) == m["num_outputs"]
    for i, out in enumerate(outs):
        want = arrays[f"{case}/out{i}"]
        got = out.asnumpy()
        assert got.dtype == want.dtype, f"{case} output {i}: {got.dtype} != MXNet's {want.dtype}"
        if (m["op"], i) in LAST_BIT:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{case} output {i}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{case} output {i}")


def test_float_gemm_is_exact_at_its_bounds():
    """The float paths give the int64 result even where every product is extreme."""
    rng = np.random.default_rng(0)
    for k, dtype in ((512, np.float32), (4096, np.float64)):
        a = np.where(rng.random((4, k)) < 0.5, -128, 127).astype(np.int8)
        b = np.full((3, k), 255, np.uint8)
        assert _int_gemm.exact_float(k, a.dtype, b.dtype) is dtype
        got = _int_gemm.int_matmul(np, a, b)
        np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64).T)
    assert _int_gemm.exact_float(2 ** 40, np.int8, np.uint8) is None


def test_int_conv_matches_int64_reference():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 5, 7, 7)).astype(np.uint8)
    w = rng.integers(-128, 128, (6, 5, 3, 3)).astype(np.int8)
    got = _int_gemm.int_conv(np, x, w, dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)))
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros(got.shape, np.int64)
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + 7:2, j:j + 7:2], w[:, :, i, j].astype(np.int64))
    np.testing.assert_array_equal(got, want)


def test_calibrate_entropy_symbol_names():
    sym = mx.sym.contrib.calibrate_entropy(mx.sym.var("h"), mx.sym.var("e"), name="c")
    assert sym.list_outputs() == ["c_threshold", "c_divergence"]


def test_quantize_outputs_keep_mxnet_names():
    sym = mx.sym.contrib.quantize_v2(mx.sym.var("x"), name="q")
    assert sym.list_outputs() == ["q_output0", "q_output1", "q_output2"]
    conv = mx.sym.contrib.quantized_conv(mx.sym.var("d"), kernel=(3, 3), num_filter=2, name="c")
    assert conv.list_arguments() == ["d", "c_weight", "c_bias", "c_min_data", "c_max_data", "c_min_weight",
                                     "c_max_weight", "c_min_bias", "c_max_bias"]
