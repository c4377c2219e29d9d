"""The data gradient of strided layers by stride phases (no col2im): the numbers of the definition."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _batch_inner as _conv_batch_inner
from mxasync.backends.numpy.kernels.conv import _phased as _conv_phased
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels.conv import convolution as _conv
from mxasync.operator.kernels.conv import deconvolution as _deconv

from .test_kernel_conv import _make
from .test_kernel_deconv import deconv_reference

convolution = functools.partial(_conv.convolution, run=NUMPY)
convolution_backward = functools.partial(_conv.convolution_backward, run=NUMPY)
deconvolution = functools.partial(_deconv.deconvolution, run=NUMPY)

# (data shape, num_filter, kernel, stride, dilate, pad, num_group): strided, undilated, kernel >= stride
CASES = [
    ((2, 3, 9, 9), 4, (3, 3), (2, 2), (1, 1), (1, 1), 1),  # ResNet's strided 3x3
    ((1, 4, 10, 7), 2, (3, 2), (2, 2), (1, 1), (0, 0), 1),  # unpadded: the last rows hear no window
    ((2, 6, 11, 8), 6, (2, 2), (2, 2), (1, 1), (0, 1), 3),  # one tap a phase, groups
    ((1, 2, 7, 9), 3, (3, 3), (2, 1), (1, 1), (1, 1), 1),  # strided along one axis only
    ((1, 2, 13, 12), 2, (5, 5), (3, 2), (1, 1), (2, 0), 1),  # two taps a phase along both axes
    ((2, 2, 3, 3), 2, (3, 3), (2, 2), (1, 1), (3, 3), 1),  # padding wider than the kernel reaches
    ((1, 2, 5, 6, 7), 2, (3, 2, 3), (2, 2, 3), (1, 1, 1), (1, 0, 1), 1),  # 3-D
]
IDS = [f"{len(c[2])}d-k{c[2]}-s{c[3]}-p{c[5]}-g{c[6]}" for c in CASES]


@pytest.fixture
def forced(monkeypatch, spy):
    """Every strided data gradient through the phases, however few its channels and small its planes."""
    monkeypatch.setattr(_conv_phased, "MIN_CHANNELS", 1)
    monkeypatch.setattr(_conv_batch_inner, "pays", lambda *a: False)
    return spy(_conv_phased, "data_grad")


def _data_grad_reference(x, w, head, kw):
    """The data gradient from the definition: the transpose of the forward, column by column of its matrix."""
    base = convolution(np, np.zeros_like(x), w, None, **kw)
    dx = np.empty_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1.0
        dx[i] = np.sum((convolution(np, e, w, None, **kw) - base) * head)
    return dx


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_data_gradient_matches_the_definition(case, dtype, rng, check, forced):
    x, w, _, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, None, **kw).shape)
    ref = _data_grad_reference(x, w, head, kw)
    dx = convolution_backward(np, head.astype(dtype), x.astype(dtype), w.astype(dtype), need_weight_grad=False,
                              **kw)[0]
    assert forced, "the phased path did not run"
    check.close(dx, ref, dtype)


@pytest.mark.parametrize("case", CASES[:3], ids=IDS[:3])
def test_data_gradient_matches_numerical(case, rng, check, forced):
    x, w, b, kw = _make(rng, case, np.float64)
    head = rng.standard_normal(convolution(np, x, w, b, **kw).shape)
    dx = convolution_backward(np, head, x, w, need_weight_grad=False, **kw)[0]
    assert forced
    check.grad(lambda v: convolution(np, v, w, b, **kw), x, head, dx, "data")


@pytest.mark.parametrize("adj", [(0, 0), (1, 1)])
def test_deconvolution_forward_matches_the_scatter_loop(adj, rng, check, forced):
    """A strided deconvolution's forward is a convolution's data gradient: by phases too (4x4/2, the usual
    upsampling, with and without ``adj``)."""
    x = rng.standard_normal((2, 3, 4, 5))
    w = rng.standard_normal((3, 2, 4, 4))
    kw = dict(kernel=(4, 4), stride=(2, 2), dilate=(1, 1), pad=(1, 1), adj=adj, num_filter=2, no_bias=True)
    out = deconvolution(np, x, w, None, **kw)
    assert forced
    check.close(out, deconv_reference(x, w, None, (2, 2), (1, 1), (1, 1), adj, 1), np.float64)


def test_chosen_by_itself_for_wide_strided_layers(rng, check, monkeypatch, spy):
    x = rng.standard_normal((2, 16, 40, 37)).astype(np.float32)  # a plane too big for the batch-inner layout
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16, no_bias=True)
    head = rng.standard_normal(convolution(np, x, w, None, **kw).shape).astype(np.float32)
    calls = spy(_conv_phased, "data_grad")
    got = convolution_backward(np, head, x, w, need_weight_grad=False, **kw)[0]
    assert calls
    monkeypatch.setattr(_conv_phased, "MIN_CHANNELS", 10**9)  # the col2im path
    check.close(got, convolution_backward(np, head, x, w, need_weight_grad=False, **kw)[0], np.float32)


def test_not_for_unit_stride_dilated_thin_or_gapped_layers():
    assert _conv_phased.pays(64, 128, (3, 3), (2, 2), (1, 1))
    assert not _conv_phased.pays(64, 64, (3, 3), (1, 1), (1, 1))  # unit stride: the flipped correlation
    assert not _conv_phased.pays(64, 128, (3, 3), (2, 2), (2, 2))  # dilated
    assert not _conv_phased.pays(3, 64, (7, 7), (2, 2), (1, 1))  # thin GEMMs
    assert not _conv_phased.pays(64, 128, (1, 1), (2, 2), (1, 1))  # a 1x1/2 layer: phases without a tap
