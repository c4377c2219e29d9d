"""imresize, resize_short and copyMakeBorder against MXNet 1.9.1, and the interp codes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from image_fixtures import EXPECTED, RAW

import mxasync as mx
from mxasync.image.resize import _get_interp_method
from mxasync.operator.image.resize import _opencv, resize_image

# imresize calls OpenCV where it is installed, as MXNet does; the opencv-python wheels are built
# with Intel IPP, whose uint8 bicubic differs from MXNet's OpenCV build by one grey level in places.
# The numpy gathers (no OpenCV, and every non-host backend) match MXNet's numbers exactly.
BICUBIC_ATOL = 1 if _opencv() is not None else 0


def _close(got, key, interp=1):
    exp = EXPECTED[key]
    assert got.shape == exp.shape
    atol = BICUBIC_ATOL if interp == 2 else 0
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    np.testing.assert_allclose(got.astype(np.float64), exp, atol=atol + 1e-4, rtol=0)


@pytest.mark.parametrize("interp", range(5))
@pytest.mark.parametrize("w,h", [(13, 9), (40, 31)])
def test_imresize_matches_mxnet(img0, interp, w, h):
    out = mx.image.imresize(img0, w, h, interp=interp)
    assert out.dtype == np.uint8
    _close(out, f"imresize_{w}x{h}_{interp}", interp)


@pytest.mark.parametrize("interp", range(5))
@pytest.mark.parametrize("w,h", [(13, 9), (40, 31)])
def test_the_numpy_gathers_match_mxnet_to_the_grey_level(img0, interp, w, h):
    out = resize_image(np, img0.asnumpy(), w, h, interp, opencv=False)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, EXPECTED[f"imresize_{w}x{h}_{interp}"].astype(np.uint8))


def test_imresize_float_and_out(img0):
    _close(mx.image.imresize(img0.astype("float32") / 3, 13, 9, interp=1), "imresize_float_1")
    out = mx.nd.zeros((9, 13, 3), dtype="uint8")
    assert mx.image.imresize(img0, 13, 9, out=out) is out
    _close(out, "imresize_13x9_1")


@pytest.mark.parametrize("key,call,interp", [
    ("resize_short_10", lambda img: mx.image.resize_short(img, 10), 2),
    ("resize_short_40_9", lambda img: mx.image.resize_short(img, 40, interp=9), 2),
    ("resize_short_tall", lambda img: mx.image.resize_short(mx.image.imdecode(RAW[3]), 11, interp=1), 1),
    ("force_resize", lambda img: mx.image.ForceResizeAug((9, 7))(img), 2),
])
def test_resize_short_matches_mxnet(img0, key, call, interp):
    _close(call(img0), key, interp)


@pytest.mark.parametrize("kind", range(5))
def test_copy_make_border_types_match_mxnet(img0, kind):
    _close(mx.image.copyMakeBorder(img0, 1, 2, 3, 4, type=kind), f"border_{kind}")


def test_copy_make_border_values(img0):
    _close(mx.image.copyMakeBorder(img0, 2, 1, 0, 3, values=(10, 20, 30)), "border_values")
    _close(mx.image.copyMakeBorder(img0, 2, 1, 0, 3, value=7), "border_value")
    one = mx.image.copyMakeBorder(img0, 1, 0, 0, 0, values=(5,)).asnumpy()
    assert one[0, 0].tolist() == [5, 0, 0]  # OpenCV's scalar: missing channels are 0
    flt = mx.image.copyMakeBorder(img0.astype("float32"), 1, 1, 1, 1, value=-1.5)
    assert flt.dtype == np.float32 and flt.asnumpy()[0, 0, 0] == -1.5


@pytest.mark.parametrize("interp,sizes,expected", [
    (9, (10, 10, 20, 20), 2), (9, (10, 10, 5, 5), 3), (9, (10, 10, 5, 20), 1), (9, (), 2),
    (0, (), 0), (4, (1, 1, 2, 2), 4),
])
def test_interp_method(interp, sizes, expected):
    assert _get_interp_method(interp, sizes) == expected


def test_interp_random_is_seeded():
    random.seed(3)
    first = [_get_interp_method(10) for _ in range(20)]
    random.seed(3)
    assert [_get_interp_method(10) for _ in range(20)] == first
    assert set(first) <= set(range(5)) and len(set(first)) > 1


@pytest.mark.parametrize("call,pattern", [
    (lambda img: mx.image.imresize(img, 0, 4), r"imresize: w must be an integer >= 1, got 0"),
    (lambda img: mx.image.imresize(img, 4, 4, interp=7), r"unknown interp method 7"),
    (lambda img: mx.image.imresize(img[:, :, 0], 4, 4), r"imresize: expected an HxWxC image .*got shape \(20, 28\)"),
    (lambda img: mx.image.resize_short(img, -2), r"resize_short: size must be an integer >= 1, got -2"),
    (lambda img: mx.image.copyMakeBorder(img, 1, 1, 1, 1, type=5), r"copyMakeBorder: type must be 0 .*got 5"),
    (lambda img: mx.image.copyMakeBorder(img, -1, 1, 1, 1), r"copyMakeBorder: top, bot, left, right must be"),
])
def test_resize_errors(img0, call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call(img0)
