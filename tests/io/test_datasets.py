"""The bundled digits dataset and its iterators."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io import datasets


def test_load_digits():
    images, labels = datasets.load_digits()
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8 and images.max() == 16
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    images[0] = 0  # a copy: the cached arrays stay intact
    assert datasets.load_digits()[0][0].any()


@pytest.mark.parametrize("fraction, n_val", [(0.2, 359), (0.5, 898)])
def test_split_is_disjoint_complete_and_stratified(fraction, n_val):
    train = datasets.digits_split("train", fraction, seed=3)
    val = datasets.digits_split("val", fraction, seed=3)
    assert len(val[0]) == n_val and len(train[0]) + len(val[0]) == 1797
    images, _ = datasets.load_digits()
    key = {img.tobytes() for img in images}
    both = [img.tobytes() for img in np.concatenate([train[0], val[0]])]
    assert set(both) == key  # complete (duplicate images can exist, so compare sets)
    assert abs(np.bincount(val[1]) - fraction * np.bincount(datasets.load_digits()[1])).max() <= 1
    other = datasets.digits_split("val", fraction, seed=4)[0]
    assert len(other) == n_val and not np.array_equal(other, val[0])
    with pytest.raises(MXAsyncError, match="split"):
        datasets.digits_split("test")


@pytest.mark.parametrize("size, flat, shape", [
    (8, False, (32, 1, 8, 8)), (28, False, (32, 1, 28, 28)), (8, True, (32, 64)), (28, True, (32, 784)),
])
def test_digits_iter_shapes(size, flat, shape):
    it = datasets.digits_iter(32, split="train", size=size, flat=flat)
    assert it.provide_data[0].shape == shape and it.provide_label[0].shape == (32,)
    batches = list(it)
    assert len(batches) == -(-1438 // 32) and batches[-1].pad == 32 * len(batches) - 1438
    data = np.concatenate([b.data[0].asnumpy() for b in batches])
    labels = np.concatenate([b.label[0].asnumpy() for b in batches])
    assert data.dtype == np.float32 and 0.0 <= data.min() and data.max() <= 1.0 and data.max() > 0.9
    assert set(np.unique(labels)) == set(range(10))


def test_digits_iter_val_is_ordered_and_upsampling_keeps_content():
    small = np.concatenate([b.data[0].asnumpy() for b in datasets.digits_iter(359, split="val")])
    big = np.concatenate([b.data[0].asnumpy() for b in datasets.digits_iter(359, split="val", size=28,
                                                                             method="nearest")])
    images, _ = datasets.digits_split("val")
    np.testing.assert_allclose(small[:, 0], images / 16.0)
    centre = (np.arange(8) * 3.5 + 1.75).astype(int)  # the output pixel at each source pixel's centre
    np.testing.assert_allclose(big[:, 0][:, centre][:, :, centre], small[:, 0])
    bilinear = datasets.upsample(images[:4].astype(np.float32), 28)
    assert bilinear.shape == (4, 28, 28)
    np.testing.assert_allclose(bilinear.mean(axis=(1, 2)), images[:4].mean(axis=(1, 2)), rtol=0.1)
