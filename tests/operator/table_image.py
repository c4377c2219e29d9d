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


def _cv_axis(n_out, n_in, taps):
    """OpenCV's source positions and float32 fractions along one axis: (first tap, fraction) per output."""
    pos = np.float32((np.arange(n_out) + 0.5) * (1.0 / (n_out / n_in)) - 0.5)
    first = np.floor(pos).astype(int)
    return first - (taps // 2 - 1), (pos - first).astype(np.float32)


def _cubic_weights(f):
    a, f = np.float32(-0.75), np.float32(f)
    w = [((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a, ((a + 2) * f - (a + 3)) * f * f + 1,
         ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1]
    return np.array(w + [1 - w[0] - w[1] - w[2]], np.float32)


def _lanczos_weights(f):
    t = np.float64(f) + 3 - np.arange(8)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(np.abs(t) < 1e-6, 1.0, np.sin(np.pi * t) * np.sin(np.pi * t / 4) / (np.pi ** 2 * t * t / 4))
    return (w / w.sum()).astype(np.float32)


def _separable(x, size, taps, weights):
    """Each output pixel from its taps x taps neighbourhood, edges repeated (a plain loop)."""
    h, w = x.shape[:2]
    ys, fys = _cv_axis(size[1], h, taps)
    xs, fxs = _cv_axis(size[0], w, taps)
    out = np.zeros((size[1], size[0], x.shape[2]))
    for i, (y0, fy) in enumerate(zip(ys, fys, strict=True)):
        for j, (x0, fx) in enumerate(zip(xs, fxs, strict=True)):
            for a, wy in enumerate(weights(fy)):
                for b, wx in enumerate(weights(fx)):
                    out[i, j] += float(wy) * float(wx) * x[min(max(y0 + a, 0), h - 1), min(max(x0 + b, 0), w - 1)]
    return out.astype(x.dtype)


def _area(x, size):
    """Shrinking by area: each output pixel is the mean of the input area it covers."""
    h, w = x.shape[:2]

    def cover(n_out, n_in):
        m = np.zeros((n_out, n_in))
        for d in range(n_out):
            lo, hi = d * n_in / n_out, (d + 1) * n_in / n_out
            for s in range(n_in):
                m[d, s] = max(0.0, min(hi, s + 1) - max(lo, s)) * n_out / n_in
        return m.astype(np.float32).astype(np.float64)

    return np.einsum("ij,jkc,lk->ilc", cover(size[1], h), x, cover(size[0], w)).astype(x.dtype)


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
    Case("_image_resize", [((4, 6, 3),)], ref=lambda x, size, interp: _separable(x, size, 4, _cubic_weights),
         params=dict(size=(9, 7), interp=2), gens=_PIX, grad=False, name="image_resize-bicubic"),
    Case("_image_resize", [((6, 9, 2),)], ref=lambda x, size, interp: _area(x, size), params=dict(size=(4, 4), interp=3),
         gens=_PIX, grad=False, name="image_resize-area"),
    Case("_image_resize", [((5, 4, 1),)], ref=lambda x, size, interp: _separable(x, size, 8, _lanczos_weights),
         params=dict(size=(7, 3), interp=4), gens=_PIX, grad=False, dtypes=("float32",), name="image_resize-lanczos"),
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
