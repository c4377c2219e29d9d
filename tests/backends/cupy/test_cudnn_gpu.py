"""cuDNN convolutions on a real GPU against the generic CuPy kernel; skipped without CuPy, a device or
the cuDNN frontend."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

CASES = [  # (data shape, filters, kernel, stride, dilate, pad, groups)
    ((2, 3, 11), 4, (3,), (2,), (1,), (1,), 1),
    ((4, 16, 14, 14), 32, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 8, 9, 9), 8, (3, 3), (2, 2), (2, 2), (1, 1), 2),
    ((2, 8, 8, 8), 8, (3, 3), (1, 1), (1, 1), (1, 1), 8),
    ((1, 4, 5, 6, 4), 6, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 1),
]


def _gpu():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as exc:
        pytest.skip(f"no GPU: {exc}")
    from mxasync.backends.cupy.cudnn import frontend

    frontend.use(None)
    if frontend.load() is None:
        pytest.skip(frontend.unavailable_reason())
    return cupy


@pytest.mark.parametrize("tune", ["off", "limited_workspace"])
@pytest.mark.parametrize("shape,nf,kernel,stride,dilate,pad,groups", CASES)
def test_cudnn_matches_the_generic_kernel(shape, nf, kernel, stride, dilate, pad, groups, tune):
    cp = _gpu()
    from types import SimpleNamespace

    from mxasync.backends.cupy.cudnn import conv
    from mxasync.operator.kernels.conv.convolution import convolution, convolution_backward

    p = SimpleNamespace(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=nf, num_group=groups,
                        workspace=1024, no_bias=False, cudnn_tune=tune, cudnn_off=False, layout=None)
    rng = np.random.default_rng(0)
    x, w, b = (cp.asarray(rng.standard_normal(s).astype(np.float32))
               for s in (shape, (nf, shape[1] // groups, *kernel), (nf,)))
    kw = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=nf, num_group=groups)
    before = len(conv.PLANS)
    y = conv.convolution_forward(cp, p, None, x, w, b)
    assert y is not NotImplemented, "cuDNN refused the forward (see the debug log)"
    np.testing.assert_allclose(cp.asnumpy(y), cp.asnumpy(convolution(cp, x, w, b, **kw)), rtol=1e-3, atol=1e-3)
    dy = cp.asarray(rng.standard_normal(y.shape).astype(np.float32))
    grads = conv.convolution_backward(cp, p, [dy], [x, w, b], [None], [True] * 3, [None] * 3)
    assert grads is not NotImplemented
    expect = convolution_backward(cp, dy, x, w, **kw)
    for got, want in zip(grads, expect, strict=True):
        np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), rtol=1e-3, atol=1e-2)
    assert len(conv.PLANS) > before
