"""vision.transforms against numpy: composition, hybridization, shapes and values."""

from __future__ import annotations

import random

import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon import HybridBlock, nn
from mxasync.gluon.data import ArrayDataset, DataLoader
from mxasync.gluon.data.vision import transforms as T

IMG = np.random.RandomState(0).randint(0, 256, (8, 6, 3)).astype(np.uint8)


def _img():
    return mx.nd.array(IMG, dtype="uint8")


def test_to_tensor_and_normalize_against_numpy():
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    want = (IMG.astype(np.float32) / 255).transpose(2, 0, 1)
    want = (want - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    for hybrid in (False, True):
        t = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
        if hybrid:
            t = nn.HybridSequential()
            t.add(T.ToTensor(), T.Normalize(mean, std))
            t.hybridize()
        out = t(_img())
        assert out.dtype == np.float32 and out.shape == (3, 8, 6)
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_compose_groups_hybrid_runs():
    t = T.Compose([T.Cast("float32"), T.ToTensor(), T.CenterCrop(2), T.RandomFlipLeftRight(), T.Resize(3)])
    kinds = [type(c).__name__ for c in t._children.values()]
    assert kinds == ["HybridSequential", "CenterCrop", "HybridSequential"]
    assert isinstance(t[0][1], T.ToTensor) and all(isinstance(c, HybridBlock) for c in t[0]._children.values())


def test_resize_and_crops_shapes():
    x = _img()
    assert T.Resize((4, 5))(x).shape == (5, 4, 3)
    assert T.Resize(4, keep_ratio=True)(x).shape == (5, 4, 3)  # short side (width 6) -> 4
    assert T.Resize(4)(x).shape == (4, 4, 3)
    np.testing.assert_array_equal(T.CenterCrop((2, 4))(x).asnumpy(), IMG[2:6, 2:4])
    np.testing.assert_array_equal(T.CropResize(1, 2, 3, 4)(x).asnumpy(), IMG[2:6, 1:4])
    assert T.CropResize(1, 2, 3, 4, size=(5, 5))(x).shape == (5, 5, 3)
    random.seed(3)
    out = T.RandomResizedCrop(5)(x)
    assert out.shape == (5, 5, 3) and out.dtype == np.uint8
    assert T.Resize(2)(mx.nd.array(np.stack([IMG, IMG]), dtype="uint8")).shape == (2, 2, 2, 3)


def test_hybridized_transforms_match_imperative():
    x = _img()
    for make in (lambda: T.Resize((3, 5)), lambda: T.CropResize(1, 1, 4, 4, size=(2, 2)), lambda: T.Cast("float64"),
                 lambda: T.Normalize(10, 2)):
        a, b = make(), make()
        b.hybridize()
        inp = x if not isinstance(a, T.Normalize) else mx.nd.array(IMG.transpose(2, 0, 1))
        np.testing.assert_allclose(a(inp).asnumpy(), b(inp).asnumpy())


def test_random_color_transforms():
    x = mx.nd.array(IMG.astype(np.float32))
    mx.random.seed(1)
    out = T.RandomBrightness(0.3)(x).asnumpy()
    ratio = (out / np.maximum(IMG, 1e-6))[IMG > 0]
    assert np.allclose(ratio, ratio[0], rtol=1e-4) and 0.7 <= ratio[0] <= 1.3
    for block in (T.RandomContrast(0.3), T.RandomSaturation(0.3), T.RandomHue(0.1),
                  T.RandomColorJitter(0.1, 0.1, 0.1, 0.1), T.RandomLighting(0.1), T.RandomFlipTopBottom()):
        y = block(x)
        assert y.shape == x.shape and y.dtype == np.float32
    np.testing.assert_allclose(T.RandomHue(0)(x).asnumpy(), IMG, rtol=1e-5, atol=1e-3)  # factor 1: unchanged
    assert T.RandomLighting(0.1)(_img()).dtype == np.uint8


def test_random_apply():
    doubled = nn.HybridLambda(lambda F, x: x * 2)
    x = mx.nd.ones((2,))
    assert T.RandomApply(doubled, p=1.0)(x).asnumpy().tolist() == [2, 2]
    assert T.RandomApply(doubled, p=0.0)(x).asnumpy().tolist() == [1, 1]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_transforms_in_a_dataloader(num_workers):
    imgs = mx.nd.array(np.stack([IMG] * 5), dtype="uint8")
    ds = ArrayDataset(imgs, np.arange(5)).transform_first(T.Compose([T.Resize(4), T.ToTensor()]))
    batches = list(DataLoader(ds, batch_size=2, num_workers=num_workers))
    assert [b[0].shape for b in batches] == [(2, 3, 4, 4), (2, 3, 4, 4), (1, 3, 4, 4)]
    assert batches[2][1].asnumpy().tolist() == [4]


def test_rotate_transforms():
    from mxasync.gluon.data.vision import transforms

    img = mx.nd.array(np.array([[[0, 0, 0], [0, 0, 1], [0, 0, 0]]], np.float32))
    np.testing.assert_allclose(transforms.Rotate(90.0)(img).asnumpy(), [[[0, 1, 0], [0, 0, 0], [0, 0, 0]]],
                               atol=1e-6)
    with pytest.raises(TypeError):
        transforms.Rotate(10.0)(mx.nd.ones((3, 4, 4), dtype="uint8"))
    with pytest.raises(ValueError):
        transforms.RandomRotation([-10, 10], rotate_with_proba=1.5)
    data = mx.nd.random.normal(shape=(3, 5, 6))
    assert transforms.RandomRotation([-90, 90], rotate_with_proba=0.0)(data) is data
    assert transforms.RandomRotation([-10, 10])(mx.nd.ones((2, 3, 5, 6))).shape == (2, 3, 5, 6)
