"""AMP and the half types on the GPU (CuPy): float16 runs natively there; bfloat16, which CuPy lacks, is
refused with an error naming the op.  Skipped without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib import amp

pytestmark = pytest.mark.skipif(mx.num_gpus() == 0, reason="no GPU")


def test_float16_amp_on_the_gpu() -> None:
    amp.init("float16")
    ctx = mx.gpu(0)
    x = mx.nd.ones((2, 3), ctx=ctx)
    y = mx.nd.FullyConnected(x, mx.nd.ones((4, 3), ctx=ctx), mx.nd.ones((4,), ctx=ctx), num_hidden=4)
    assert y.dtype is np.float16 and y.asnumpy().tolist() == [[4.0] * 4] * 2
    assert mx.nd.softmax(y).dtype is np.float32


def test_bfloat16_on_the_gpu_names_the_op() -> None:
    with pytest.raises(mx.MXNetError, match="bfloat16"):
        mx.nd.ones((2,), ctx=mx.gpu(0), dtype="bfloat16")
    x = mx.nd.ones((2, 3), ctx=mx.gpu(0))
    amp.init("bfloat16")
    with pytest.raises(mx.MXNetError, match="bfloat16"):
        mx.nd.FullyConnected(x, mx.nd.ones((4, 3), ctx=mx.gpu(0)), no_bias=True, num_hidden=4)
