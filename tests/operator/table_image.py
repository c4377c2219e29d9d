"""Table rows: the image ops (``mxasync/operator/image``); MXNet-recorded values are in test_image_ops.py."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform

_PIX = uniform(0.0, 255.0)
_EIG = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])


def _to_tensor(x):
    return np.moveaxis(x / 255.0, -1, -3)


def _normalize(x, mean, std):
    m = np.array(mean)[:, None, None]
    s = np.array(std)[:, None, None]
    return (x - m) / s


def _crop(x, x0, y0, w, h):
    return x[..., y0:y0 + h, x0:x0 + w, :]


def _halve(x):  # bilinear at exactly half size is a 2x2 mean
    h, w, c = x.shape
    return x.reshape(h // 2, 2, w // 2, 2, c).mean(axis=(1, 3))


def _either(flip_axis):
    def check(outs, inputs, params):
        x = inputs[0]
        assert np.array_equal(outs[0], x) or np.array_equal(outs[0], np.flip(x, flip_axis))
    return check


def _equals(fn):
    def check(outs, inputs, params):
        np.testing.assert_allclose(outs[0], fn(inputs[0]), rtol=1e-5, atol=1e-4)
    return check


def _gray_mean(x):
    return (x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114).mean()


CASES = [
    Case("_image_to_tensor", [((4, 5, 3),), ((2, 4, 5, 3),)], ref=_to_tensor, gens=_PIX, grad=False),
    Case("_image_normalize", [((3, 4, 5),), ((2, 3, 2, 2),)],
         ref=lambda x, mean, std: _normalize(x, mean, std), params=dict(mean=(0.1, 0.2, 0.3), std=(0.5, 1.5, 2.0))),
    Case("_image_crop", [((4, 5, 3),), ((2, 4, 5, 1),)],
         ref=lambda data, **p: _crop(data, p["x"], p["y"], p["width"], p["height"]),
         params=dict(x=1, y=2, width=3, height=2)),
    Case("_image_flip_left_right", [((3, 4, 2),), ((2, 3, 4, 3),)], ref=lambda x: np.flip(x, -2)),
    Case("_image_flip_top_bottom", [((3, 4, 2),), ((2, 3, 4, 3),)], ref=lambda x: np.flip(x, -3)),
    Case("_image_resize", [((4, 6, 3),)], ref=lambda x, size: _halve(x), params=dict(size=(3, 2)), gens=_PIX,
         grad=False),
    Case("_image_random_flip_left_right", [((3, 4, 3),)], check=_either(-2)),
    Case("_image_random_flip_top_bottom", [((3, 4, 3),)], check=_either(-3)),
    Case("_image_random_brightness", [((3, 4, 3),)], gens=_PIX, params=dict(min_factor=1.5, max_factor=1.5),
         check=_equals(lambda x: x * 1.5)),
    Case("_image_random_contrast", [((3, 4, 3),)], gens=_PIX, params=dict(min_factor=0.5, max_factor=0.5),
         check=_equals(lambda x: x * 0.5 + _gray_mean(x) * 0.5)),
    Case("_image_random_saturation", [((3, 4, 3),)], gens=_PIX, params=dict(min_factor=1.0, max_factor=1.0),
         check=_equals(lambda x: x)),
    Case("_image_random_hue", [((3, 4, 3),)], gens=_PIX, params=dict(min_factor=1.0, max_factor=1.0),
         check=_equals(lambda x: x)),
    Case("_image_random_color_jitter", [((3, 4, 3),)], gens=_PIX,
         params=dict(brightness=0, contrast=0, saturation=0, hue=0), check=_equals(lambda x: x)),
    Case("_image_random_lighting", [((3, 4, 3),)], gens=_PIX, params=dict(alpha_std=0.0),
         check=_equals(lambda x: x)),
    Case("_image_adjust_lighting", [((3, 4, 3),)], gens=_PIX, params=dict(alpha=(0.1, 0.2, 0.3)),
         ref=lambda x, alpha: x + _EIG @ (np.array(alpha) * np.array([55.46, 4.794, 1.148])), grad=False),
]
