"""``mx.image``: MXNet 1.9's image functions, augmenters and ``ImageIter``, on NDArrays.

Images are HxWxC NDArrays (``uint8`` after decoding, RGB unless ``to_rgb=0``);
sizes are ``(width, height)``. Pixel work is done in numpy by the codecs and
resizers of :mod:`mxasync.io.image`; random augmenters draw from Python's
``random`` (and ``numpy.random`` for lighting) in MXNet's order, so seeding
both reproduces MXNet's choices. See ``docs/image.md``.
"""

from . import detection, image  # noqa: E402  (MXNet's mx.image.image and mx.image.detection modules)
from ._arrays import ImageError
from .augmenter import Augmenter, CastAug, RandomOrderAug, SequentialAug
from .color import (
    BrightnessJitterAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ContrastJitterAug,
    HueJitterAug,
    LightingAug,
    RandomGrayAug,
    SaturationJitterAug,
    color_normalize,
)
from .create import CreateAugmenter
from .crop import center_crop, fixed_crop, random_crop, random_size_crop, scale_down
from .decode import imdecode, imread
from .detection import (
    CreateDetAugmenter,
    CreateMultiRandCropAugmenter,
    DetAugmenter,
    DetBorrowAug,
    DetHorizontalFlipAug,
    DetRandomCropAug,
    DetRandomPadAug,
    DetRandomSelectAug,
    ImageDetIter,
)
from .geometry import (
    CenterCropAug,
    ForceResizeAug,
    HorizontalFlipAug,
    RandomCropAug,
    RandomSizedCropAug,
    ResizeAug,
)
from .iterator import ImageIter
from .resize import copyMakeBorder, imresize, resize_short
from .rotate import imrotate, random_rotate

__all__ = [
    "imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop", "random_crop",
    "center_crop", "color_normalize", "random_size_crop", "imrotate", "random_rotate",
    "Augmenter", "SequentialAug", "RandomOrderAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
    "RandomSizedCropAug", "CenterCropAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
    "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug",
    "CastAug", "CreateAugmenter", "ImageIter", "ImageError", "DetAugmenter", "DetBorrowAug", "DetRandomSelectAug",
    "DetHorizontalFlipAug", "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
    "CreateDetAugmenter", "ImageDetIter", "detection", "det",
]

det = detection  # MXNet's alias
