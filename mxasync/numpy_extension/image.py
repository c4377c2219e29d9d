"""``mx.npx.image``: the image ops on ``mx.np`` arrays, and ``mx.image``'s functions (MXNet 1.9.1's).

The ops (``to_tensor``, ``normalize``, ``resize``, ``crop``, the flips and the colour jitters)
are the registry's ``_image_*`` ops: an ``mx.np`` array in gives one out. Every other name
(``imread``, ``imresize``, ``random_crop``, the augmenters) is ``mx.image``'s, which hands back
``mx.np`` arrays under ``npx.set_np()``, as MXNet's ``npx.image`` re-exports it.

>>> from mxasync import np, npx
>>> x = np.ones((2, 3, 3), dtype="uint8")
>>> t = npx.image.to_tensor(x)
>>> type(t).__name__, t.shape, float(t[0, 0, 0])
('ndarray', (3, 2, 3), 0.00392156...)
"""

from __future__ import annotations

from typing import Any

from ..ndarray import image as _ops

#: MXNet 1.9.1's npx.image ops (its other names are mx.image's)
OPS = ("adjust_lighting", "crop", "flip_left_right", "flip_top_bottom", "normalize", "random_brightness",
       "random_color_jitter", "random_contrast", "random_flip_left_right", "random_flip_top_bottom", "random_hue",
       "random_lighting", "random_saturation", "resize", "to_tensor")
__all__ = list(OPS)


def __getattr__(name: str) -> Any:
    if name in OPS:
        fn = getattr(_ops, name)
        globals()[name] = fn
        return fn
    if name.startswith("__"):
        raise AttributeError(name)
    from .. import image as _image  # the face re-exports the layer above, as MXNet's does (test_layering)

    try:
        return getattr(_image, name)
    except AttributeError:
        raise AttributeError(f"module 'mxasync.numpy_extension.image' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    from .. import image as _image

    return sorted(set(OPS) | {n for n in dir(_image) if not n.startswith("_")})
