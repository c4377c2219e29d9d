"""The layouts that need no columns: depthwise layers over the padded grid or as banded GEMMs, and unit
1x1 layers as one batched GEMM. Each must give the numbers of the direct definition, and be chosen only
where it pays."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _banded, _depthwise
from mxasync.backends.numpy.kernels.conv import _core as _conv_core
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels.conv import convolution as _conv

from .test_kernel_conv import _make, conv_reference

convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)

DEPTHWISE = [
    ((2, 3, 9, 8), 3, (3, 3), (1, 1), (1, 1), (1, 1), 3),
    ((1, 4, 7, 9), 4, (3, 2), (1, 1), (2, 1), (2, 0), 4),  # dilated, uneven padding per axis
    ((2, 2, 6), 2, (3,), (1,), (1,), (1,), 2),  # 1-D
    ((1, 2, 4, 5, 4), 2, (2, 3, 2), (1, 1, 1), (1, 1, 2), (1, 0, 1), 2),  # 3-D
]
POINTWISE = [
    ((2, 6, 5, 4), 4, (1, 1), (1, 1), (1, 1), (0, 0), 1),
    ((2, 6, 5, 4), 4, (1, 1), (1, 1), (1, 1), (0, 0), 2),  # grouped
    ((3, 5, 7), 3, (1,), (1,), (1,), (0,), 1),
]


def _ids(cases):
    return [f"{len(c[2])}d-k{c[2]}-d{c[4]}-p{c[5]}-g{c[6]}" for c in cases]


@pytest.fixture
def depthwise_calls(monkeypatch, spy):
    """Every depthwise layer through the padded-grid layout, however small its planes."""
    monkeypatch.setattr(_banded, "MAX_PADDED_WIDTH", 0)
    monkeypatch.setattr(_depthwise, "MIN_PLANE", 1)
    monkeypatch.setattr(_depthwise, "BLOCK_BYTES", 64)  # several channel blocks per sample
    return spy(_depthwise, "forward")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", DEPTHWISE, ids=_ids(DEPTHWISE))
def test_depthwise_matches_loops(case, dtype, rng, check, depthwise_calls):
    _matches_loops(case, dtype, rng, check, depthwise_calls, "depthwise")


def _matches_loops(case, dtype, rng, check, calls: list, layout: str) -> None:
    """The layout that ``calls`` counts ran on ``case`` and matches the float64 loop reference."""
    x, w, b, kw = _make(rng, case, dtype)
    out = convolution(np, x, w, b, **kw)
    assert calls, f"the {layout} layout did not run"
    ref = conv_reference(*(a.astype(np.float64) for a in (x, w, b)), kw["stride"], kw["dilate"], kw["pad"],
                         kw["num_group"])
    check.close(out, ref, dtype)


@pytest.mark.parametrize("case", DEPTHWISE[:2], ids=_ids(DEPTHWISE[:2]))
def test_depthwise_weight_gradient_recomputes_columns(case, rng, check, depthwise_calls):
    """A training forward here keeps no columns: the weight gradient must compute its own."""
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dw = convolution_backward(np, head, x, w, need_data_grad=False, **kw)[1]
    check.grad(lambda v: convolution(np, x, v, b, **kw), w, head, dw, "weight")


@pytest.mark.parametrize("case", POINTWISE, ids=_ids(POINTWISE))
def test_pointwise_is_one_batched_gemm(case, rng, check, monkeypatch):
    x, w, b, kw = _make(rng, case, np.float32)
    monkeypatch.setattr(_conv_core, "POINTWISE_MIN_PLANE", 1)
    calls, taken = [], []
    real_matmul, real_columnless = _conv_core.matmul, _conv_core._columnless
    monkeypatch.setattr(_conv_core, "matmul", lambda *a, **k: (calls.append(a[2].shape), real_matmul(*a, **k))[1])
    monkeypatch.setattr(_conv_core, "_columnless", lambda *a: (taken.append(real_columnless(*a)), taken[-1])[1])
    out = convolution(np, x, w, b, **kw)
    g = kw["num_group"]
    assert taken == [True]
    assert calls == [(x.shape[0], g, x.shape[1] // g, int(np.prod(x.shape[2:])))]  # the input itself, no columns
    ref = conv_reference(*(a.astype(np.float64) for a in (x, w, b)), kw["stride"], kw["dilate"], kw["pad"], g)
    check.close(out, ref, np.float32)


def test_pointwise_rule_leaves_small_planes_to_the_batch_inner_gemm(rng):
    x = rng.standard_normal((2, 8, 7, 7)).astype(np.float32)  # 49 < POINTWISE_MIN_PLANE
    w = rng.standard_normal((1, 4, 8)).astype(np.float32)
    out = np.empty((2, 1, 4, 49), np.float32)
    assert not _conv_core._columnless(x, w, (1, 1), (1, 1), (1, 1), (0, 0), (7, 7), out)


@pytest.mark.parametrize("stride, plane, chosen", [((1, 1), 28, True), ((1, 1), 27, False), ((2, 2), 56, False)])
def test_depthwise_rule(stride, plane, chosen):
    assert _depthwise.pays(32, 32, 1, stride, (plane, plane)) is chosen
    assert not _depthwise.pays(32, 16, 1, stride, (plane, plane))  # two channels per group
    assert not _depthwise.pays(32, 32, 2, stride, (plane, plane))  # channel multiplier 2


BANDED = [
    ((2, 3, 9, 8), 3, (3, 3), (1, 1), (1, 1), (1, 1), 3),
    ((3, 4, 11, 10), 4, (3, 3), (2, 2), (1, 1), (1, 1), 4),  # stride 2, odd padded height
    ((1, 5, 10, 13), 5, (3, 2), (3, 2), (2, 1), (2, 0), 5),  # stride 3 x 2, dilated, uneven padding per axis
    ((2, 2, 5, 7), 2, (5, 3), (1, 2), (1, 2), (2, 2), 2),  # kernel taller than wide, dilated columns
]


@pytest.fixture
def banded_calls(monkeypatch, spy):
    """Every 2-D depthwise layer through the banded-GEMM layout, however narrow its planes."""
    monkeypatch.setattr(_banded, "MIN_PADDED_WIDTH", 1)
    return spy(_banded, "forward")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", BANDED, ids=_ids(BANDED))
def test_banded_depthwise_matches_loops(case, dtype, rng, check, banded_calls):
    _matches_loops(case, dtype, rng, check, banded_calls, "banded")


@pytest.mark.parametrize("case", BANDED[1:3], ids=_ids(BANDED[1:3]))
def test_banded_forward_and_generic_backward_agree(case, rng, check, banded_calls):
    """The backward (generic layouts) is the gradient of this forward: numerical checks for x and w."""
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx, dw, _ = convolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")
    check.grad(lambda v: convolution(np, x, v, b, **kw), w, head, dw, "weight")


@pytest.mark.parametrize("width, chosen", [(32, True), (64, True), (14, True), (8, False), (128, False)])
def test_banded_rule(width, chosen):
    assert _banded.pays(32, 32, 1, (8, 32, width, width), (1, 1)) is chosen
    assert not _banded.pays(32, 16, 1, (8, 32, 32, 32), (1, 1))  # two channels per group
    assert not _banded.pays(32, 32, 1, (8, 32, 32), (1,))  # 1-D
