"""Image transforms (MXNet 1.9's ``gluon.data.vision.transforms``): Blocks and HybridBlocks over
``mx.nd.image`` ops and ``mx.image``'s crops.

>>> import mxasync as mx
>>> t = Compose([Resize(4), ToTensor(), Normalize(0.5, 0.25)])
>>> t(mx.nd.ones((8, 6, 3), dtype='uint8') * 255).shape
(3, 4, 4)
"""

from __future__ import annotations

import numbers
import random

import numpy as np

from .... import image
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "RandomResizedCrop", "CropResize", "CenterCrop", "Resize",
           "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness", "RandomContrast",
           "RandomSaturation", "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply", "Rotate",
           "RandomRotation"]


class Compose(Sequential):
    """Chain transforms; each run of consecutive HybridBlocks is grouped into a HybridSequential.

    MXNet also hybridizes each group. We leave them imperative: a DataLoader's thread workers call
    the same Compose at once, and a hybridized block's cached graph serves one caller at a time
    (each of these transforms is one op, so there is little to gain). Call ``hybridize()`` yourself
    when a single thread uses it.
    """

    def __init__(self, transforms):
        super().__init__()
        run: list = []
        for t in [*transforms, None]:
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            if len(run) == 1:
                self.add(run[0])
            elif len(run) > 1:
                block = HybridSequential()
                for h in run:
                    block.add(h)
                self.add(block)
            run = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Cast to ``dtype``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """(H, W, C) uint8 in [0, 255] to a float32 (C, H, W) tensor in [0, 1] (batches: NHWC to NCHW)."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean[c]) / std[c]`` on a (C, H, W) or (N, C, H, W) tensor (numbers or per-channel tuples)."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, mean=self._mean, std=self._std)


def _pair(size):
    return (size, size) if isinstance(size, numbers.Number) else tuple(size)


class RandomResizedCrop(Block):
    """Crop a random area (``scale`` of the image, aspect ``ratio``) and resize it to ``size`` (w, h)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the ``(x, y, width, height)`` window, then resize it to ``size`` when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, x=self._x, y=self._y, width=self._width, height=self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, size=self._size, keep_ratio=False, interp=interp)
        return out


class CenterCrop(Block):
    """Crop the centre ``size`` (w, h), resizing first when the image is smaller."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize to ``size`` (w, h); one int with ``keep_ratio`` resizes the short side and keeps the aspect."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, size=self._size, keep_ratio=self._keep, interp=self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Flip the width axis with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip the height axis with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomFactor(HybridBlock):
    _op = ""

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, min_factor=self._args[0], max_factor=self._args[1])


class RandomBrightness(_RandomFactor):
    """Scale pixel values by a factor drawn from [max(0, 1 - brightness), 1 + brightness]."""

    _op = "random_brightness"


class RandomContrast(_RandomFactor):
    """Blend with the mean grey level by a factor drawn from [max(0, 1 - contrast), 1 + contrast]."""

    _op = "random_contrast"


class RandomSaturation(_RandomFactor):
    """Blend with each pixel's grey level by a factor drawn from [max(0, 1 - saturation), 1 + saturation]."""

    _op = "random_saturation"


class RandomHue(_RandomFactor):
    """Rotate the hue by a factor drawn from [max(0, 1 - hue), 1 + hue]."""

    _op = "random_hue"


class RandomColorJitter(HybridBlock):
    """Brightness, contrast, saturation and hue jitter in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        b, c, s, h = self._args
        return F.image.random_color_jitter(x, brightness=b, contrast=c, saturation=s, hue=h)


class RandomLighting(HybridBlock):
    """AlexNet's PCA lighting noise with component weights drawn from N(0, alpha)."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, alpha_std=self._alpha)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``, as MXNet)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)


def _float32_only(x, name):
    if x.dtype != np.float32:
        raise TypeError(f"{name}: this transformation only supports float32. Consider calling it after ToTensor, "
                        f"given: {np.dtype(x.dtype).name}")


class Rotate(Block):
    """Rotate CHW (or NCHW) float32 images by ``rotation_degrees`` about their centre (``mx.image.imrotate``)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _float32_only(x, "Rotate")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, rotate by an angle drawn uniformly from ``angle_limits``
    (numpy's global generator, as MXNet)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _float32_only(x, "RandomRotation")
        return image.random_rotate(x, *self._args)
