"""color_normalize and the colour augmenters: MXNet's values, seeded draws, in-place updates, errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from image_fixtures import EXPECTED

import mxasync as mx

MEAN, STD = [123.68, 116.28, 103.53], [58.395, 57.12, 57.375]


def _float_img(seed=0, shape=(6, 7, 3)):
    return np.random.default_rng(seed).uniform(0, 255, shape).astype(np.float32)


def test_color_normalize_matches_mxnet_in_place(img0):
    src = img0.astype("float32")
    out = mx.image.color_normalize(src, mx.nd.array(MEAN), mx.nd.array(STD))
    assert out is src  # MXNet updates src in place
    np.testing.assert_allclose(out.asnumpy(), EXPECTED["color_normalize"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mean,std", [(MEAN, STD), (np.array(MEAN), None), (5.0, 2.0), (None, [2.0])])
def test_color_normalize_operands(mean, std):
    img = _float_img()
    out = mx.image.color_normalize(mx.nd.array(img), mean, std).asnumpy()
    exp = img - (np.float32(0) if mean is None else np.asarray(mean, np.float32))
    exp = exp / (np.float32(1) if std is None else np.asarray(std, np.float32))
    np.testing.assert_allclose(out, exp, rtol=1e-6)


def test_color_normalize_channel_mismatch():
    with pytest.raises(ValueError, match=r"color_normalize: mean of shape \(3,\) does not broadcast onto the image "
                                         r"of shape \(4, 4, 1\)"):
        mx.image.color_normalize(mx.nd.zeros((4, 4, 1)), mx.nd.array(MEAN))


def _jitter_reference(kind, img, alpha):
    coef = np.array([0.299, 0.587, 0.114], np.float32)
    if kind == "brightness":
        return img * np.float32(alpha)
    if kind == "contrast":
        gray = (img * coef).sum() * 3.0 * (1.0 - alpha) / img.size
        return img * np.float32(alpha) + np.float32(gray)
    gray = (img * coef).sum(axis=2, keepdims=True) * np.float32(1.0 - alpha)
    return img * np.float32(alpha) + gray


@pytest.mark.parametrize("kind,cls", [("brightness", mx.image.BrightnessJitterAug),
                                      ("contrast", mx.image.ContrastJitterAug),
                                      ("saturation", mx.image.SaturationJitterAug)])
def test_jitters_use_python_random(kind, cls):
    img = _float_img(1)
    random.seed(7)
    alpha = 1.0 + random.uniform(-0.4, 0.4)
    random.seed(7)
    src = mx.nd.array(img)
    out = cls(0.4)(src)
    assert out is src  # in place, as MXNet
    np.testing.assert_allclose(out.asnumpy(), _jitter_reference(kind, img, alpha), rtol=1e-5, atol=1e-3)
    assert cls(0.4).dumps() == f'["{cls.__name__.lower()}", {{"{kind}": 0.4}}]'


def test_hue_jitter_rotates_hue_and_keeps_gray():
    random.seed(2)
    gray = mx.nd.full((3, 3, 3), 77.0)
    # a gray pixel has no hue to rotate; the YIQ matrices (3 digits) are inverses to about 0.2 %
    np.testing.assert_allclose(mx.image.HueJitterAug(0.5)(gray).asnumpy(), 77.0, rtol=3e-3)
    img = _float_img(3)
    random.seed(4)
    out = mx.image.HueJitterAug(0.0)(mx.nd.array(img)).asnumpy()
    np.testing.assert_allclose(out, img, rtol=3e-3, atol=0.5)  # hue 0: just the YIQ round trip


def test_lighting_uses_numpy_random():
    img = _float_img(2)
    eigval, eigvec = mx.image.color.PCA_EIGVAL, mx.image.color.PCA_EIGVEC
    np.random.seed(3)
    alpha = np.random.normal(0, 0.1, size=(3,))
    np.random.seed(3)
    out = mx.image.LightingAug(0.1, eigval, eigvec)(mx.nd.array(img)).asnumpy()
    np.testing.assert_allclose(out, img + np.dot(eigvec * alpha, eigval).astype(np.float32), rtol=1e-6)


def test_random_gray_and_color_jitter():
    img = _float_img(4)
    out = mx.image.RandomGrayAug(1.0)(mx.nd.array(img)).asnumpy()
    gray = img @ np.array([0.21, 0.72, 0.07], np.float32)
    np.testing.assert_allclose(out, np.repeat(gray[..., None], 3, axis=2), rtol=1e-5)
    src = mx.nd.array(img)
    assert mx.image.RandomGrayAug(0.0)(src) is src
    jitter = mx.image.ColorJitterAug(0.1, 0, 0.3)
    assert [type(t).__name__ for t in jitter.ts] == ["BrightnessJitterAug", "SaturationJitterAug"]
    random.seed(0)
    a = jitter(mx.nd.array(img)).asnumpy()
    random.seed(0)
    b = jitter(mx.nd.array(img)).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_color_normalize_aug_dumps():
    assert mx.image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), None).dumps() == \
        '["colornormalizeaug", {"mean": [1.0, 2.0, 3.0], "std": null}]'
    aug = mx.image.ColorNormalizeAug([10.0, 20.0, 30.0], 2.0)
    out = aug(mx.nd.full((1, 1, 3), 40.0)).asnumpy().ravel().tolist()
    assert out == [15.0, 10.0, 5.0]
