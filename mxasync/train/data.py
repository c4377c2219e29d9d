"""The data of ``mxasync train``: the bundled digits at 28x28, with random shifts for training.

>>> train, val, stats = digits_data(batch_size=64, max_shift=2, seed=0)
>>> train.provide_data[0].shape, val.num_data, 0.0 < stats[0] < 1.0
((64, 1, 28, 28), 359, True)
>>> shift_images(np.arange(9.0).reshape(1, 1, 3, 3), np.array([1]), np.array([0]))[0, 0].tolist()
[[0.0, 0.0, 0.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
"""

from __future__ import annotations

import numpy as np

from ..io import DataIter, NDArrayIter
from ..io.datasets import digits_split, upsample

__all__ = ["digits_data", "shift_images", "ShiftAugmentIter"]


def shift_images(images: np.ndarray, dy: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Move image ``i`` of ``(n, c, h, w)`` down by ``dy[i]`` and right by ``dx[i]`` pixels, filling with 0."""
    n, _, h, w = images.shape
    m = int(max(np.abs(dy).max(initial=0), np.abs(dx).max(initial=0)))
    padded = np.pad(images, ((0, 0), (0, 0), (m, m), (m, m)))
    out = np.empty_like(images)
    for oy in np.unique(dy):  # one slice per distinct offset pair, not per image
        for ox in np.unique(dx[dy == oy]):
            sel = (dy == oy) & (dx == ox)
            out[sel] = padded[sel, :, m - oy:m - oy + h, m - ox:m - ox + w]
    return out


class ShiftAugmentIter(DataIter):
    """An ``NDArrayIter`` over freshly shifted (up to ``max_shift`` pixels) and shuffled images each epoch.

    Epoch ``e``'s shifts and order depend on ``(seed, e)`` only, so a run resumed at epoch ``e``
    (:meth:`set_epoch`) sees the batches an uninterrupted run sees.  ``reset()`` moves to the next epoch.

    >>> x, y = np.arange(8.0).reshape(8, 1, 1, 1), np.arange(8.0)
    >>> run = ShiftAugmentIter(x, y, batch_size=8, max_shift=0, seed=3)
    >>> run.reset(); second = run.next().label[0].asnumpy().tolist()
    >>> resumed = ShiftAugmentIter(x, y, batch_size=8, max_shift=0, seed=3)
    >>> resumed.set_epoch(1); resumed.next().label[0].asnumpy().tolist() == second
    True
    """

    _async_inline = True

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch_size: int, max_shift: int = 2, seed: int = 0):
        super().__init__(batch_size)
        self._images, self._labels = images, labels
        self._max_shift = max_shift
        self._seed = seed
        self.epoch = 0
        self.num_data = len(images)
        self._inner = self._epoch_iter()

    def _epoch_iter(self) -> NDArrayIter:
        rng = np.random.default_rng([self._seed, self.epoch])
        x = self._images
        if self._max_shift > 0:
            dy, dx = rng.integers(-self._max_shift, self._max_shift + 1, size=(2, len(x)))
            x = shift_images(x, dy, dx)
        order = rng.permutation(len(x))
        return NDArrayIter(x[order], self._labels[order], self.batch_size, last_batch_handle="pad")

    def set_epoch(self, epoch: int) -> None:
        """Start over at epoch ``epoch`` (0-based): its shifts and order, as an uninterrupted run has them."""
        self.epoch = epoch
        self._inner = self._epoch_iter()

    @property
    def provide_data(self):
        return self._inner.provide_data

    @property
    def provide_label(self):
        return self._inner.provide_label

    def reset(self) -> None:
        self.set_epoch(self.epoch + 1)

    def next(self):
        return self._inner.next()


def digits_data(batch_size: int, max_shift: int = 2, seed: int = 0, size: int = 28):
    """``(train iterator, val iterator, (mean, std) of the training pixels)`` over the digits split."""
    parts = {}
    for split in ("train", "val"):
        images, labels = digits_split(split)
        x = np.clip(upsample(images.astype(np.float32) / 16.0, size), 0.0, 1.0)[:, None]
        parts[split] = (x, labels.astype(np.float32))
    (tx, ty), (vx, vy) = parts["train"], parts["val"]
    stats = (float(tx.mean()), float(tx.std()))
    train = ShiftAugmentIter(tx, ty, batch_size, max_shift, seed)
    val = NDArrayIter(vx, vy, batch_size, last_batch_handle="pad")
    return train, val, stats
