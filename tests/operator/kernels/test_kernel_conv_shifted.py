"""Unit-stride convolution over shifted views (no im2col): the numbers of the im2col path."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _shifted as _conv_shifted
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels.conv import convolution as _conv

from .test_kernel_conv import CASES, IDS, _make, conv_reference

# the numpy backend's override: the kernels with its runner (layouts, BLAS, kernel threads)
convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)

UNIT = [(c, i) for c, i in zip(CASES, IDS, strict=True) if all(s == 1 for s in c[3])]
# a 3-D layer with dilation and padding: the flat shifts then span planes as well as rows
UNIT.append((((1, 2, 5, 4, 6), 3, (2, 3, 2), (1, 1, 1), (2, 1, 1), (1, 1, 0), 1), "3d-dilated-padded"))


@pytest.fixture
def forced(monkeypatch, spy):
    """Every unit-stride forward through the shifted views, however few its channels."""
    monkeypatch.setattr(_conv_shifted, "MIN_CHANNELS", 1)
    return spy(_conv_shifted, "forward")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", [c for c, _ in UNIT], ids=[i for _, i in UNIT])
def test_forward_matches_loops(case, dtype, rng, check, forced):
    x, w, b, kw = _make(rng, case, dtype)
    out = convolution(np, x, w, b, **kw)
    assert forced, "the shifted-view path did not run"
    ref = conv_reference(*(a.astype(np.float64) for a in (x, w, b)), kw["stride"], kw["dilate"], kw["pad"],
                         kw["num_group"])
    check.close(out, ref, dtype)


@pytest.mark.parametrize("case", CASES + [UNIT[-1][0]], ids=IDS + [UNIT[-1][1]])
def test_data_gradient_matches_numerical(case, rng, check, forced):
    """The data gradient of a unit-stride layer is a correlation with the flipped kernel: shifted views too."""
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx = convolution_backward(np, head, x, w, need_weight_grad=False, **kw)[0]
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")


def test_chosen_by_itself_for_wide_layers(rng, check, monkeypatch, spy):
    x = rng.standard_normal((2, 16, 40, 37)).astype(np.float32)  # a plane too big for the batch-inner layout
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
    calls = spy(_conv_shifted, "forward")
    got = convolution(np, x, w, None, **kw)
    assert calls
    monkeypatch.setattr(_conv_shifted, "MIN_CHANNELS", 10**9)
    check.close(got, convolution(np, x, w, None, **kw), np.float32)


def test_training_forward_keeps_no_columns_and_the_weight_gradient_recomputes_them(rng, check, monkeypatch):
    from mxasync.backends.numpy.kernels.conv import _colstore
    from mxasync.backends.numpy.kernels.conv import _core as _conv_core

    store = _colstore.ColumnStore(budget=1 << 24)
    monkeypatch.setattr(_conv_core, "COLUMNS", store)
    x = rng.standard_normal((2, 16, 40, 37))
    w = rng.standard_normal((8, 16, 3, 3))
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
    head = rng.standard_normal((2, 8, 40, 37))
    convolution(np, x, w, None, keep=True, **kw)
    assert store.stats()["kept"] == 0
    _, dw, _ = convolution_backward(np, head, x, w, **kw)
    check.grad(lambda v: convolution(np, x, v, None, **kw), w, head, dw, "weight")


def test_not_for_strided_or_thin_layers():
    assert not _conv_shifted.pays(64, (2, 2))
    assert not _conv_shifted.pays(3, (1, 1))  # ResNet's first layer: 3 channels make thin GEMMs
    assert _conv_shifted.pays(64, (1, 1))
