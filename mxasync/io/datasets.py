"""Small real datasets that ship with mxasync, for examples and tests that must not download.

``digits``: the 1,797 8x8 handwritten digits of the UCI "Optical Recognition of Handwritten
Digits" set (CC BY 4.0; see ``data/DIGITS_LICENSE.txt``).

>>> images, labels = load_digits()
>>> images.shape, images.dtype, int(images.max()), labels[:5].tolist()
((1797, 8, 8), dtype('uint8'), 16, [0, 1, 2, 3, 4])
>>> it = digits_iter(64, split="val", size=28)
>>> it.provide_data[0].shape, it.num_data
((64, 1, 28, 28), 359)
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..base import MXAsyncError
from .ndarray_iter import NDArrayIter

__all__ = ["load_digits", "digits_split", "digits_iter", "upsample"]

_DATA = Path(__file__).with_name("data")
_DIGITS_MAX = 16.0  # pixel values are counts of on-pixels in 4x4 blocks: 0..16


@lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    with np.load(_DATA / "digits.npz") as f:
        images, labels = f["images"], f["labels"]
    images.setflags(write=False)
    labels.setflags(write=False)
    return images, labels


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)``: uint8 ``(1797, 8, 8)`` with values 0..16, and int64 ``(1797,)`` in 0..9."""
    images, labels = _digits()
    return images.copy(), labels.astype(np.int64)


def _interp_matrix(n_in: int, n_out: int, method: str) -> np.ndarray:
    """``(n_out, n_in)`` weights sampling pixel centres (half-pixel offsets, edges clamped)."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    weights = np.zeros((n_out, n_in), np.float32)
    if method == "nearest":
        weights[np.arange(n_out), np.clip(np.floor(centres + 0.5), 0, n_in - 1).astype(int)] = 1.0
        return weights
    if method != "bilinear":
        raise MXAsyncError(f"upsample: method must be 'bilinear' or 'nearest', got {method!r}")
    centres = np.clip(centres, 0, n_in - 1)
    lo = np.floor(centres).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = (centres - lo).astype(np.float32)
    np.add.at(weights, (np.arange(n_out), lo), 1 - frac)
    np.add.at(weights, (np.arange(n_out), hi), frac)
    return weights


def upsample(images: np.ndarray, size: int, method: str = "bilinear") -> np.ndarray:
    """Resize ``(n, h, w)`` images to ``(n, size, size)`` float32 (separable, so two small matmuls).

    >>> upsample(np.array([[[0, 4], [8, 12]]], np.float32), 4)[0, 0].tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    n, h, w = images.shape
    rows = _interp_matrix(h, size, method)
    cols = _interp_matrix(w, size, method)
    return np.einsum("oh,nhw,pw->nop", rows, images.astype(np.float32), cols, optimize=True)


def digits_split(split: str = "train", val_fraction: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``train`` or ``val`` part of the digits: a seeded, class-stratified split (indices sorted).

    Returns ``(images uint8 (n, 8, 8), labels int64 (n,))``; the two parts are disjoint and complete.
    """
    if split not in ("train", "val"):
        raise MXAsyncError(f"digits: split must be 'train' or 'val', got {split!r}")
    if not 0.0 < val_fraction < 1.0:
        raise MXAsyncError(f"digits: val_fraction must be in (0, 1), got {val_fraction}")
    images, labels = _digits()
    rng = np.random.default_rng(seed)
    val = []
    for cls in range(10):  # stratified: every class keeps its share in both parts
        members = np.flatnonzero(labels == cls)
        val.append(rng.permutation(members)[:round(len(members) * val_fraction)])
    is_val = np.zeros(len(labels), bool)
    is_val[np.concatenate(val)] = True
    keep = is_val if split == "val" else ~is_val
    return images[keep], labels[keep].astype(np.int64)


def digits_iter(batch_size: int, split: str = "train", val_fraction: float = 0.2, seed: int = 0, size: int = 8,
                flat: bool = False, shuffle: bool | None = None, method: str = "bilinear",
                last_batch_handle: str = "pad", data_name: str = "data",
                label_name: str = "softmax_label") -> NDArrayIter:
    """An ``NDArrayIter`` over the digits: float32 NCHW ``(batch, 1, size, size)`` in [0, 1] (or flat).

    ``size=28`` upsamples (``method`` 'bilinear' or 'nearest') to LeNet's MNIST input size.
    ``shuffle`` defaults to True for 'train' and False for 'val'; it uses numpy's global RNG
    (``np.random.seed``), like every ``NDArrayIter``. Labels are float32, as MXNet's losses expect.
    """
    images, labels = digits_split(split, val_fraction, seed)
    data = images.astype(np.float32) / _DIGITS_MAX
    if size != images.shape[1]:
        data = np.clip(upsample(data, size, method), 0.0, 1.0)
    data = data.reshape(len(data), -1) if flat else data[:, None]
    if shuffle is None:
        shuffle = split == "train"
    return NDArrayIter(data, labels.astype(np.float32), batch_size, shuffle=shuffle,
                       last_batch_handle=last_batch_handle, data_name=data_name, label_name=label_name)
