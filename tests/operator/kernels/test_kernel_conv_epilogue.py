"""The numpy convolution core applies a forward's bias and a fused relu in each layout's last copy: every
layout must give ``max(conv + bias, 0)`` of the direct definition, and plain ``conv + bias`` without relu."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.conv import _banded, _batch_inner, _depthwise, _shifted
from mxasync.backends.numpy.kernels.conv import _core as _conv_core
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels._runner import PLAIN
from mxasync.operator.kernels.conv import convolution as _conv

from .test_kernel_conv import _make, conv_reference

convolution = functools.partial(_conv.convolution, run=NUMPY)

# layout -> (case, settings that make the layout take it); case: (data shape, filters, kernel, stride,
# dilate, pad, groups)
LAYOUTS = {
    "banded": (((2, 3, 9, 8), 3, (3, 3), (2, 2), (1, 1), (1, 1), 3), [(_banded, "MIN_PADDED_WIDTH", 1)]),
    "depthwise": (((2, 3, 9, 8), 3, (3, 3), (1, 1), (1, 1), (1, 1), 3),
                  [(_banded, "MAX_PADDED_WIDTH", 0), (_depthwise, "MIN_PLANE", 1)]),
    "pointwise": (((2, 6, 5, 4), 4, (1, 1), (1, 1), (1, 1), (0, 0), 1), [(_conv_core, "POINTWISE_MIN_PLANE", 1)]),
    "batch_inner": (((2, 8, 6, 6), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1), []),
    "shifted": (((2, 16, 5, 6), 4, (1, 3), (1, 1), (1, 1), (0, 1), 1), []),
    "per_sample": (((1, 4, 7, 6), 6, (3, 2), (2, 1), (1, 2), (1, 0), 2), []),
}


@pytest.fixture
def taken(monkeypatch):
    """The layout modules whose forward ran."""
    seen = []
    for name, module in (("banded", _banded), ("depthwise", _depthwise), ("shifted", _shifted),
                         ("batch_inner", _batch_inner)):
        real = module.forward
        monkeypatch.setattr(module, "forward", lambda *a, real=real, name=name, **k: (seen.append(name),
                                                                                      real(*a, **k))[1])
    return seen


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_bias_and_relu_in_every_layout(layout, relu, keep, rng, check, monkeypatch, taken):
    case, settings = LAYOUTS[layout]
    for module, name, value in settings:
        monkeypatch.setattr(module, name, value)
    x, w, b, kw = _make(rng, case, np.float32)
    out = convolution(np, x, w, b, relu=relu, keep=keep, **kw)
    expected = layout if layout not in ("pointwise", "per_sample") else None
    assert taken == ([expected] if expected else []), taken
    ref = conv_reference(*(a.astype(np.float64) for a in (x, w, b)), kw["stride"], kw["dilate"], kw["pad"],
                         kw["num_group"])
    check.close(out, np.maximum(ref, 0) if relu else ref, np.float32)


@pytest.mark.parametrize("relu", [False, True])
def test_generic_core_applies_them_after_its_gemm(relu, rng, check):
    x, w, b, kw = _make(rng, LAYOUTS["per_sample"][0], np.float64)
    out = _conv.convolution(np, x, w, b, relu=relu, run=PLAIN, **kw)
    ref = conv_reference(x, w, b, kw["stride"], kw["dilate"], kw["pad"], kw["num_group"])
    check.close(out, np.maximum(ref, 0) if relu else ref)
