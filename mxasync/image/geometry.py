"""Geometric augmenters: resize, crops and the horizontal flip.

Sizes are ``(width, height)``; ``interp`` follows :mod:`mxasync.image.resize`
(default 2, bicubic, as in MXNet).

>>> import mxasync as mx
>>> img = mx.nd.zeros((20, 28, 3), dtype="uint8")
>>> [a(img).shape for a in (ResizeAug(10), ForceResizeAug((6, 5)), CenterCropAug((8, 8)))]
[(10, 14, 3), (5, 6, 3), (8, 8, 3)]
>>> RandomSizedCropAug((8, 8), 0.08, (3 / 4, 4 / 3)).dumps()
'["randomsizedcropaug", {"size": [8, 8], "area": 0.08, "ratio": [0.75, 1.3333333333333333], "interp": 2}]'
"""

from __future__ import annotations

import random
import warnings

import numpy as np

from ..ndarray import NDArray
from ._arrays import image_shape, to_numpy, to_result
from .augmenter import Augmenter
from .crop import center_crop, random_crop, random_size_crop
from .resize import _get_interp_method, imresize, resize_short

__all__ = ["ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug", "CenterCropAug",
           "HorizontalFlipAug"]


class ResizeAug(Augmenter):
    """Resize the shorter side to ``size`` (see ``resize_short``)."""

    def __init__(self, size: int, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src: NDArray) -> NDArray:
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to ``size = (w, h)`` regardless of the aspect ratio."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src: NDArray) -> NDArray:
        h, w, _ = image_shape(src, "ForceResizeAug")
        method = _get_interp_method(self.interp, (h, w, self.size[1], self.size[0]))
        return imresize(src, self.size[0], self.size[1], interp=method)


class RandomCropAug(Augmenter):
    """Crop ``size = (w, h)`` at a random position (see ``random_crop``)."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src: NDArray) -> NDArray:
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Crop a random area and aspect ratio, resized to ``size`` (see ``random_size_crop``)."""

    def __init__(self, size: tuple[int, int], area, ratio: tuple[float, float], interp: int = 2, **kwargs) -> None:
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if "min_area" in kwargs:
            warnings.warn("RandomSizedCropAug: `min_area` is deprecated, use `area`", DeprecationWarning,
                          stacklevel=2)
            area = kwargs.pop("min_area")
        if kwargs:
            raise TypeError(f"RandomSizedCropAug: unexpected keyword argument(s) {sorted(kwargs)}")
        self.area = area
        self.ratio = ratio
        self.interp = interp

    def __call__(self, src: NDArray) -> NDArray:
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """Crop ``size = (w, h)`` from the centre (see ``center_crop``)."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src: NDArray) -> NDArray:
        return center_crop(src, self.size, self.interp)[0]


class HorizontalFlipAug(Augmenter):
    """Flip left-right with probability ``p`` (one ``random.random()`` draw per call)."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            image_shape(src, "HorizontalFlipAug")
            src = to_result(np.ascontiguousarray(to_numpy(src)[:, ::-1]))
        return src
