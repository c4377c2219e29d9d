"""imdecode / imread against MXNet 1.9.1 (PNG and JPEG, colour, gray, BGR), and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from image_fixtures import EXPECTED, IMAGES, NAMES, RAW

import mxasync as mx


@pytest.mark.parametrize("i", range(len(NAMES)))
@pytest.mark.parametrize("flag,key", [(1, "imdecode"), (0, "imdecode_gray")])
def test_imdecode_matches_mxnet(i, flag, key):
    out = mx.image.imdecode(RAW[i], flag=flag)
    assert isinstance(out, mx.nd.NDArray) and out.dtype == np.uint8
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED[f"{key}_{i}"])


def test_imdecode_bgr_and_input_types():
    bgr = mx.image.imdecode(RAW[1], to_rgb=0).asnumpy()
    np.testing.assert_array_equal(bgr, EXPECTED["imdecode_bgr_1"])
    as_u8 = np.frombuffer(RAW[1], np.uint8)
    for buf in (bytearray(RAW[1]), as_u8, mx.nd.array(as_u8, dtype="uint8")):
        np.testing.assert_array_equal(mx.image.imdecode(buf).asnumpy(), EXPECTED["imdecode_1"])


def test_imdecode_into_out():
    out = mx.nd.zeros((20, 28, 3), dtype="uint8")
    assert mx.image.imdecode(RAW[0], out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["imdecode_0"])
    with pytest.raises(mx.MXNetError, match=r"imdecode: out has shape \(2, 2, 3\) but the image is \(20, 28, 3\)"):
        mx.image.imdecode(RAW[0], out=mx.nd.zeros((2, 2, 3), dtype="uint8"))


def test_imread_matches_mxnet():
    path = f"{IMAGES}/{NAMES[0]}"
    np.testing.assert_array_equal(mx.image.imread(path).asnumpy(), EXPECTED["imread_0"])
    assert mx.image.imread(path, flag=0).shape == (20, 28, 1)
    np.testing.assert_array_equal(mx.image.imread(path, to_rgb=False).asnumpy(), EXPECTED["imread_0"][:, :, ::-1])


@pytest.mark.parametrize("call,error,pattern", [
    (lambda: mx.image.imdecode("not bytes"), ValueError, r"imdecode: buf must be bytes.*got str"),
    (lambda: mx.image.imdecode(b"garbage"), mx.MXNetError, r"imdecode: decoding failed, invalid image"),
    (lambda: mx.image.imdecode(RAW[0], flag=-1), ValueError, r"imdecode: flag must be 0 .* or 1 .*got -1"),
    (lambda: mx.image.imread("/nonexistent/x.png"), mx.MXNetError, r"imread: cannot read '/nonexistent/x.png'"),
])
def test_decode_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()
