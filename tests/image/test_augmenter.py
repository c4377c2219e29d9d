"""Augmenter base, containers and geometric augmenters; CreateAugmenter against MXNet's dumps; the
seeded full augmentation chain against MXNet 1.9.1."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from image_fixtures import EXPECTED, META, RAW

import mxasync as mx

CONFIGS = {  # the CreateAugmenter calls of make_fixtures.py
    "default": dict(data_shape=(3, 8, 8)),
    "all": dict(data_shape=(3, 300, 300), resize=10, rand_crop=True, rand_resize=True, rand_mirror=True,
                mean=True, std=True, brightness=0.1, contrast=0.2, saturation=0.3, hue=0.4, pca_noise=0.5,
                rand_gray=0.6, inter_method=10),
    "crop": dict(data_shape=(3, 10, 12), rand_crop=True, mean=np.array([1.0, 2.0, 3.0]), std=np.array([2.0])),
    "jitter": dict(data_shape=(3, 4, 4), brightness=0.1, saturation=0.2),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_create_augmenter_dumps_match_mxnet(name):
    assert [a.dumps() for a in mx.image.CreateAugmenter(**CONFIGS[name])] == META["create_augmenter"][name]


@pytest.mark.parametrize("key,aug", [
    ("sequential", lambda: mx.image.SequentialAug([mx.image.CastAug(), mx.image.HorizontalFlipAug(0.5)])),
    ("force_resize", lambda: mx.image.ForceResizeAug((5, 4))),
    ("lighting", lambda: mx.image.LightingAug(0.1, np.array([1.0, 2.0, 3.0]), np.eye(3))),
    ("normalize_nd", lambda: mx.image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), None)),
])
def test_dumps_match_mxnet(key, aug):
    assert aug().dumps() == META["dumps"][key]


def test_seeded_chain_matches_mxnet():
    """Python's random and numpy's RNG are drawn in MXNet's order: the same seeds give MXNet's images."""
    random.seed(5)
    np.random.seed(5)
    augs = mx.image.CreateAugmenter((3, 12, 14), resize=16, rand_crop=True, rand_mirror=True, brightness=0.3,
                                    contrast=0.3, saturation=0.3, hue=0.2, pca_noise=0.1, rand_gray=0.3,
                                    mean=True, std=True, inter_method=1)
    outs = []
    for k in range(4):
        x = mx.image.imdecode(RAW[k % 2])
        for aug in augs:
            x = aug(x)
        outs.append(x.asnumpy())
    np.testing.assert_allclose(np.stack(outs), EXPECTED["seeded_augment"], rtol=1e-5, atol=1e-4)


def test_random_order_and_sequential():
    calls = []

    class Tag(mx.image.Augmenter):
        def __init__(self, name):
            super().__init__(name=name)
            self.name = name

        def __call__(self, src):
            calls.append(self.name)
            return src

    seq = mx.image.SequentialAug([Tag("a"), Tag("b"), Tag("c")])
    seq(mx.nd.zeros((1, 1, 3)))
    assert calls == ["a", "b", "c"]
    rnd = mx.image.RandomOrderAug([Tag("a"), Tag("b"), Tag("c")])
    orders = set()
    for seed in range(12):
        calls.clear()
        random.seed(seed)
        rnd(mx.nd.zeros((1, 1, 3)))
        orders.add(tuple(calls))
        assert sorted(calls) == ["a", "b", "c"]
    assert len(orders) > 1
    assert json.loads(Tag("x").dumps()) == ["tag", {"name": "x"}]
    with pytest.raises(NotImplementedError, match="Augmenter must implement"):
        mx.image.Augmenter()(mx.nd.zeros((1, 1, 3)))


def test_geometric_augmenters_shapes(img0):
    cases = [(mx.image.ResizeAug(10), (10, 14, 3)), (mx.image.ForceResizeAug((6, 5), interp=1), (5, 6, 3)),
             (mx.image.RandomCropAug((9, 7)), (7, 9, 3)), (mx.image.CenterCropAug((9, 7)), (7, 9, 3)),
             (mx.image.RandomSizedCropAug((9, 7), 0.3, (0.5, 2.0)), (7, 9, 3)), (mx.image.CastAug(), (20, 28, 3))]
    for aug, shape in cases:
        random.seed(0)
        out = aug(img0)
        assert out.shape == shape, aug
        random.seed(0)
        np.testing.assert_array_equal(aug(img0).asnumpy(), out.asnumpy())  # seeded: reproducible


def test_horizontal_flip(img0):
    flipped = mx.image.HorizontalFlipAug(1.0)(img0).asnumpy()
    np.testing.assert_array_equal(flipped, EXPECTED["imdecode_0"][:, ::-1])
    assert mx.image.HorizontalFlipAug(0.0)(img0) is img0
    random.seed(1)
    flips = sum(mx.image.HorizontalFlipAug(0.5)(img0) is not img0 for _ in range(200))
    assert 70 < flips < 130


def test_random_sized_crop_min_area_is_deprecated():
    with pytest.warns(DeprecationWarning, match="min_area"):
        aug = mx.image.RandomSizedCropAug((4, 4), None, (0.75, 1.33), min_area=0.5)
    assert aug.area == 0.5
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['bogus'\]"):
        mx.image.RandomSizedCropAug((4, 4), 0.5, (0.75, 1.33), bogus=1)


@pytest.mark.parametrize("kwargs,pattern", [
    (dict(data_shape=(3, 8)), r"CreateAugmenter: data_shape must be \(channels, height, width\)"),
    (dict(data_shape=(3, 8, 8), rand_resize=True), r"CreateAugmenter: rand_resize=True needs rand_crop=True"),
    (dict(data_shape=(3, 8, 8), mean=np.zeros(2)), r"CreateAugmenter: mean must be True, None or 1 or 3 values"),
    (dict(data_shape=(3, 8, 8), std=np.zeros((3, 1))), r"CreateAugmenter: std must be .* got shape \(3, 1\)"),
])
def test_create_augmenter_errors(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        mx.image.CreateAugmenter(**kwargs)
