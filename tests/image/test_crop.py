"""Crops against MXNet 1.9.1: fixed/centre exactly, random ones with the same seeds, plus errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from image_fixtures import EXPECTED, META

import mxasync as mx


@pytest.mark.parametrize("src,size,expected", [tuple(case) for case in META["scale_down"]])
def test_scale_down_matches_mxnet(src, size, expected):
    assert mx.image.scale_down(tuple(src), tuple(size)) == tuple(expected)


def test_fixed_crop_matches_mxnet(img0):
    out = mx.image.fixed_crop(img0, 2, 3, 10, 8)
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["fixed_crop"])
    out = mx.image.fixed_crop(img0, 2, 3, 10, 8, size=(5, 4), interp=1)
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["fixed_crop_resized"])


def test_fixed_crop_is_a_copy(img0):
    out = mx.image.fixed_crop(img0, 0, 0, 4, 4)
    out[:] = 0
    np.testing.assert_array_equal(img0.asnumpy(), EXPECTED["imdecode_0"])


@pytest.mark.parametrize("size,interp,key", [((10, 8), 2, "center_crop"), ((40, 36), 1, "center_crop_up")])
def test_center_crop_matches_mxnet(img0, size, interp, key):
    out, rect = mx.image.center_crop(img0, size, interp=interp)
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED[key])
    assert list(rect) == META[f"{key}_rect"]


@pytest.mark.parametrize("seed", range(4))
def test_random_crops_draw_like_mxnet(img0, seed):
    random.seed(seed)
    out, rect = mx.image.random_crop(img0, (10, 8))
    assert list(rect) == META["seeded"][f"random_crop_{seed}"] and out.shape == (8, 10, 3)
    x, y, w, h = rect
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["imdecode_0"][y:y + h, x:x + w])
    random.seed(seed)
    out, rect = mx.image.random_size_crop(img0, (10, 8), 0.08, (0.75, 4 / 3))
    assert list(rect) == META["seeded"][f"random_size_crop_{seed}"] and out.shape == (8, 10, 3)


def test_random_size_crop_properties(img0):
    for seed in range(30):
        random.seed(seed)
        out, (x, y, w, h) = mx.image.random_size_crop(img0, (6, 5), (0.3, 0.6), (0.5, 2.0), interp=1)
        assert out.shape == (5, 6, 3)
        assert 0 <= x <= 28 - w and 0 <= y <= 20 - h
        assert 0.3 * 560 * 0.8 <= w * h <= 0.6 * 560 * 1.25  # area up to rounding
    with pytest.warns(DeprecationWarning, match="min_area"):
        mx.image.random_size_crop(img0, (6, 5), None, (0.5, 2.0), min_area=0.5)


def test_random_crop_upsamples_small_images():
    img = mx.nd.zeros((4, 6, 3), dtype="uint8")
    out, rect = mx.image.random_crop(img, (12, 12))
    assert out.shape == (12, 12, 3) and rect[1:] == (0, 4, 4) and 0 <= rect[0] <= 2


@pytest.mark.parametrize("call,pattern", [
    (lambda img: mx.image.fixed_crop(img, 20, 0, 10, 8),
     r"fixed_crop: the crop \(x0=20, y0=0, w=10, h=8\) does not fit in the image of width 28 and height 20"),
    (lambda img: mx.image.fixed_crop(img, -1, 0, 5, 5), r"fixed_crop: the crop \(x0=-1"),
    (lambda img: mx.image.center_crop(img, (0, 5)), r"center_crop: size must be \(width, height\) with both >= 1"),
    (lambda img: mx.image.random_crop(img, (100, 1)), r"random_crop: a crop .* \(100, 1\) .* is empty \(28x0\)"),
    (lambda img: mx.image.random_size_crop(img, (5, 5), 1.5, (1, 1)), r"random_size_crop: area must be"),
    (lambda img: mx.image.random_size_crop(img, (5, 5), 0.5, (2, 1)), r"random_size_crop: ratio must be"),
    (lambda img: mx.image.center_crop(img[0], (5, 5)), r"center_crop: expected an HxWxC image"),
])
def test_crop_errors(img0, call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call(img0)


def test_crop_accepts_numpy():
    out, rect = mx.image.center_crop(EXPECTED["imdecode_0"], (10, 8))
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["center_crop"])
