"""``mx.image.image``: the module where MXNet keeps the image functions (``mx.img.image.imread``)."""

from .crop import center_crop, fixed_crop, random_crop, random_size_crop, scale_down  # noqa: F401
from .decode import imdecode, imread  # noqa: F401
from .resize import copyMakeBorder, imresize, resize_short  # noqa: F401
from .rotate import imrotate, random_rotate  # noqa: F401
