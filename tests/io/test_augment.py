"""Augmenter tests: shapes, seeded reproducibility, and the maths of each step."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io.image import augment as A

pytest.importorskip("PIL")


def rng(seed=0):
    return np.random.default_rng(seed)


IMG = np.random.default_rng(5).integers(0, 256, (30, 40, 3), dtype=np.uint8)

# (name, fn(img, rng) -> array, expected shape)
SHAPES = [
    ("resize_short", lambda im, r: A.resize_short(im, 15), (15, 20, 3)),
    ("resize_short_tall", lambda im, r: A.resize_short(im.transpose(1, 0, 2), 15), (20, 15, 3)),
    ("center_crop", lambda im, r: A.center_crop(im, (20, 10)), (10, 20, 3)),
    ("center_crop_upscale", lambda im, r: A.center_crop(im, (64, 48)), (48, 64, 3)),
    ("random_crop", lambda im, r: A.random_crop(im, (21, 17), r), (17, 21, 3)),
    ("random_resized_crop", lambda im, r: A.random_resized_crop(im, (16, 16), r), (16, 16, 3)),
    ("random_mirror", lambda im, r: A.random_mirror(im, r), (30, 40, 3)),
    ("pad", lambda im, r: A.pad(im, 3), (36, 46, 3)),
    ("color_jitter", lambda im, r: A.color_jitter(im, r, 0.3, 0.3, 0.3), (30, 40, 3)),
    ("hwc_to_chw", lambda im, r: A.hwc_to_chw(im), (3, 30, 40)),
]
RANDOM = {"random_crop", "random_resized_crop", "random_mirror", "color_jitter"}


@pytest.mark.parametrize(("name", "fn", "shape"), SHAPES, ids=[s[0] for s in SHAPES])
def test_shapes_and_determinism(name, fn, shape):
    a = fn(IMG, rng(1))
    assert a.shape == shape
    assert a.dtype == (np.float32 if name == "color_jitter" else np.uint8)
    np.testing.assert_array_equal(a, fn(IMG, rng(1)))  # same seed, same result
    if name in RANDOM:  # different seeds give different results (somewhere among a few seeds)
        assert any(not np.array_equal(a, fn(IMG, rng(s))) for s in range(2, 8))


def test_crops_take_pixels_from_the_image():
    img = np.arange(30 * 40, dtype=np.int64).reshape(30, 40, 1).astype(np.float32)
    c = A.center_crop(img, (10, 6))
    np.testing.assert_array_equal(c[:, :, 0], img[12:18, 15:25, 0])
    for seed in range(10):
        r = A.random_crop(img, (10, 6), rng(seed))[:, :, 0]
        y0, x0 = divmod(int(r[0, 0]), 40)
        np.testing.assert_array_equal(r, img[y0:y0 + 6, x0:x0 + 10, 0])


def test_random_resized_crop_area_and_ratio():
    # an image whose pixel value is its x coordinate: the crop's width is recoverable with nearest sampling
    img = np.tile(np.arange(400, dtype=np.float32), (300, 1))[:, :, None]
    for seed in range(20):
        out = A.random_resized_crop(img, (400, 300), rng(seed), area=(0.2, 0.5), ratio=(0.5, 2.0), interp=0)
        width = out[0, -1, 0] - out[0, 0, 0] + 1
        # area 24000..60000 px, w/h in [0.5, 2]: w = sqrt(area * ratio) lies in [109, 346]
        assert 105 <= width <= 350, width
    fallback = A.random_resized_crop(img, (10, 10), rng(0), area=(5.0, 6.0))  # nothing fits: centre crop
    np.testing.assert_array_equal(fallback, A.center_crop(img, (10, 10)))


def test_mirror_flips():
    seen = set()
    for seed in range(20):
        out = A.random_mirror(IMG, rng(seed))
        seen.add(np.array_equal(out, IMG[:, ::-1]) and not np.array_equal(out, IMG))
    assert seen == {True, False}


JITTERS = [
    ("brightness", A.brightness_jitter),
    ("contrast", A.contrast_jitter),
    ("saturation", A.saturation_jitter),
]


@pytest.mark.parametrize(("name", "fn"), JITTERS, ids=[j[0] for j in JITTERS])
def test_jitter_maths(name, fn):
    img = IMG.astype(np.float32)
    alpha = 1.0 + rng(3).uniform(-0.4, 0.4)
    out = fn(img, 0.4, rng(3))
    gray = img @ np.array([0.299, 0.587, 0.114], np.float32)
    expected = {
        "brightness": img * alpha,
        "contrast": img * alpha + (1 - alpha) * gray.mean(),
        "saturation": img * alpha + (1 - alpha) * gray[:, :, None],
    }[name]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(fn(img, 0.0, rng(3)), img)  # zero strength is the identity


def test_normalize_batch_per_channel():
    batch = np.random.default_rng(0).uniform(0, 255, (4, 3, 5, 6)).astype(np.float32)
    mean, std = [123.7, 116.3, 103.5], [58.4, 57.1, 57.4]
    out = A.normalize_batch(batch, mean, std, scale=2.0)
    expected = (batch - np.array(mean, np.float32)[:, None, None]) * 2.0 / np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert out is not batch
    same = A.normalize_batch(batch, mean, std, scale=2.0, out=batch)
    assert same is batch
    np.testing.assert_allclose(batch, expected, rtol=1e-5)
    u8 = np.full((2, 1, 2, 2), 10, np.uint8)
    assert A.normalize_batch(u8, 4).dtype == np.float32


@pytest.mark.parametrize(("kwargs", "msg"), [
    ({"mean": [1, 2]}, "mean has 2 values"),
    ({"std": [1, 0, 1]}, "non-zero"),
])
def test_normalize_batch_errors(kwargs, msg):
    with pytest.raises(MXAsyncError, match=msg):
        A.normalize_batch(np.zeros((1, 3, 2, 2), np.float32), **kwargs)
    with pytest.raises(MXAsyncError, match="NCHW"):
        A.normalize_batch(np.zeros((3, 2, 2), np.float32))


AUGMENTERS = [
    {},
    {"resize": 20},
    {"rand_crop": True, "rand_mirror": True},
    {"random_resized_crop": True, "min_random_area": 0.3, "max_aspect_ratio": 0.25},
    {"random_resized_crop": True, "min_random_area": 0.3, "min_aspect_ratio": 0.5, "max_aspect_ratio": 2.0},
    {"pad": 4, "fill_value": 0, "rand_crop": True},
    {"brightness": 0.2, "contrast": 0.2, "saturation": 0.2, "mirror": True},
    {"inter_method": 10, "resize": 17},
    {"max_rotate_angle": 30, "max_shear_ratio": 0.2, "min_random_scale": 0.7, "max_random_scale": 1.3,
     "max_aspect_ratio": 0.3, "fill_value": 0, "rand_crop": True},
    {"min_crop_size": 10, "max_crop_size": 20, "rand_crop": True, "inter_method": 9},
    {"random_h": 20, "random_s": 20, "random_l": 20},
    {"pca_noise": 0.1, "rotate": 45},
]


@pytest.mark.parametrize("kwargs", AUGMENTERS)
@pytest.mark.parametrize("channels", [1, 3])
def test_image_augmenter_chain(kwargs, channels):
    aug = A.ImageAugmenter(size=(16, 12), **kwargs)
    img = IMG if channels == 3 else IMG[:, :, :1]
    out = aug(img, rng(4))
    assert out.shape == (12, 16, channels)
    assert out.dtype == (np.float32 if aug.jitters else np.uint8)
    np.testing.assert_array_equal(out, aug(img, rng(4)))


@pytest.mark.parametrize(("kwargs", "msg"), [
    ({"size": (0, 4)}, "size"),
    ({"size": (4, 4), "inter_method": 5}, "inter_method"),
    ({"size": (4, 4), "min_random_area": 0.9, "max_random_area": 0.5}, "min_random_area"),
    ({"size": (4, 4), "brightness": -1}, ">= 0"),
])
def test_image_augmenter_validates(kwargs, msg):
    with pytest.raises(MXAsyncError, match=msg):
        A.ImageAugmenter(**kwargs)
