"""``CreateAugmenter``: MXNet's standard augmenter list for ``ImageIter``.

Order (MXNet's): ``ResizeAug`` (``resize > 0``); ``RandomSizedCropAug``
(``rand_resize``, area 0.08-1, ratio 3/4-4/3), ``RandomCropAug`` (``rand_crop``)
or ``CenterCropAug``; ``HorizontalFlipAug(0.5)`` (``rand_mirror``);
``CastAug`` (float32); ``ColorJitterAug``; ``HueJitterAug``; ``LightingAug``
(``pca_noise``); ``RandomGrayAug`` (``rand_gray``); ``ColorNormalizeAug``
(``mean``/``std``; ``True`` means ImageNet's values).

>>> [a.dumps() for a in CreateAugmenter((3, 8, 8), resize=10)]
['["resizeaug", {"size": 10, "interp": 2}]', '["centercropaug", {"size": [8, 8], "interp": 2}]', \
'["castaug", {"type": "float32"}]']
"""

from __future__ import annotations

import numpy as np

from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ._arrays import ImageError
from .augmenter import Augmenter, CastAug
from .color import (
    PCA_EIGVAL,
    PCA_EIGVEC,
    ColorJitterAug,
    ColorNormalizeAug,
    HueJitterAug,
    LightingAug,
    RandomGrayAug,
)
from .geometry import CenterCropAug, HorizontalFlipAug, RandomCropAug, RandomSizedCropAug, ResizeAug

__all__ = ["CreateAugmenter", "IMAGENET_MEAN", "IMAGENET_STD"]

#: ``mean=True`` / ``std=True``: ImageNet's RGB mean and standard deviation, as MXNet uses them.
IMAGENET_MEAN = (123.68, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)


def _stat(value, default: tuple[float, ...], name: str):
    """``mean``/``std``: None, True (ImageNet's), or 1 or 3 values (an NDArray stays one)."""
    if value is None:
        return None
    if value is True:
        return nd_array(default)
    if isinstance(value, NDArray):
        shape = tuple(value.shape)
    else:
        value = np.asarray(value, np.float64)
        shape = value.shape
    if len(shape) != 1 or shape[0] not in (1, 3):
        raise ImageError(f"CreateAugmenter: {name} must be True, None or 1 or 3 values (R, G, B), "
                         f"got shape {shape}")
    return value


def CreateAugmenter(data_shape, resize: int = 0, rand_crop: bool = False, rand_resize: bool = False,  # noqa: N802
                    rand_mirror: bool = False, mean=None, std=None, brightness: float = 0, contrast: float = 0,
                    saturation: float = 0, hue: float = 0, pca_noise: float = 0, rand_gray: float = 0,
                    inter_method: int = 2) -> list[Augmenter]:
    """The augmenter list for images of ``data_shape = (C, H, W)`` (see the module doc for the order).

    ``rand_resize`` needs ``rand_crop``. ``inter_method`` is the ``interp`` of every resize.
    """
    if len(data_shape) != 3:
        raise ImageError(f"CreateAugmenter: data_shape must be (channels, height, width), got {data_shape!r}")
    if rand_resize and not rand_crop:
        raise ImageError("CreateAugmenter: rand_resize=True needs rand_crop=True")
    augs: list[Augmenter] = []
    if resize > 0:
        augs.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        augs.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        augs.append(RandomCropAug(crop_size, inter_method))
    else:
        augs.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        augs.append(HorizontalFlipAug(0.5))
    augs.append(CastAug())
    if brightness or contrast or saturation:
        augs.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        augs.append(HueJitterAug(hue))
    if pca_noise > 0:
        augs.append(LightingAug(pca_noise, PCA_EIGVAL, PCA_EIGVEC))
    if rand_gray > 0:
        augs.append(RandomGrayAug(rand_gray))
    mean, std = _stat(mean, IMAGENET_MEAN, "mean"), _stat(std, IMAGENET_STD, "std")
    if mean is not None or std is not None:
        augs.append(ColorNormalizeAug(mean, std))
    return augs
