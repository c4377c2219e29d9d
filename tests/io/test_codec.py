"""Image codec tests: every installed library combination decodes, encodes and resizes alike."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io.image import codec

INSTALLED = {name: importlib.util.find_spec(mod) is not None
             for name, mod in (("simplejpeg", "simplejpeg"), ("opencv", "cv2"), ("pillow", "PIL"))}
COMBOS = [("simplejpeg", "opencv", "pillow"), ("simplejpeg", "pillow"), ("opencv",), ("pillow",)]

pytestmark = pytest.mark.skipif(not INSTALLED["pillow"], reason="Pillow is the baseline image library")


@pytest.fixture(params=COMBOS, ids=["+".join(c) for c in COMBOS])
def libs(request):
    missing = [n for n in request.param if not INSTALLED[n]]
    if missing:
        pytest.skip(f"not installed: {missing}")
    codec.set_codecs(request.param)
    yield request.param
    codec.set_codecs(None)


def test_codecs_report(libs):
    chosen = codec.codecs()
    assert chosen["decode_jpeg"] == libs[0]
    assert chosen["resize"] == ("opencv" if "opencv" in libs else "pillow")


@pytest.mark.parametrize("fmt", [".png", ".jpg", ".bmp"])
@pytest.mark.parametrize("order", ["rgb", "bgr"])
def test_encode_decode_color(libs, gradient, fmt, order):
    img = gradient(24, 32)
    buf = codec.encode(img, fmt, quality=95, channel_order=order)
    out = codec.decode(buf, 1, channel_order=order)
    assert out.shape == (24, 32, 3) and out.dtype == np.uint8
    err = np.abs(out.astype(int) - img.astype(int))
    assert err.max() == 0 if fmt != ".jpg" else err.mean() < 3
    swapped = codec.decode(buf, 1, channel_order="bgr" if order == "rgb" else "rgb")
    np.testing.assert_array_equal(swapped, out[..., ::-1])


@pytest.mark.parametrize("fmt", [".png", ".jpg"])
def test_gray_and_unchanged(libs, gradient, fmt):
    gray = gradient(16, 20)[:, :, 0]
    buf = codec.encode(gray, fmt)
    assert codec.decode(buf, -1).shape == (16, 20)
    assert codec.decode(buf, 0).shape == (16, 20)
    color = codec.decode(buf, 1)
    assert color.shape == (16, 20, 3) and (color[..., 0] == color[..., 2]).all()
    rgb_buf = codec.encode(gradient(16, 20), fmt)
    assert codec.decode(rgb_buf, -1).shape == (16, 20, 3)
    assert codec.decode(rgb_buf, 0).shape == (16, 20)


def test_alpha_png(libs):
    rgba = np.zeros((3, 4, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 255, 128
    buf = codec.encode(rgba, ".png")
    out = codec.decode(buf, -1)
    assert out.shape == (3, 4, 4) and out[0, 0].tolist() == [255, 0, 0, 128]
    assert codec.decode(buf, -1, channel_order="bgr")[0, 0].tolist() == [0, 0, 255, 128]
    assert codec.decode(buf, 1).shape == (3, 4, 3)
    with pytest.raises(MXAsyncError, match="alpha"):
        codec.encode(rgba, ".jpg")


@pytest.mark.parametrize("bad", [b"", b"\xff\xd8\xff" + b"\0" * 50, b"GIF89a-nope", np.zeros(10, np.uint8)])
def test_bad_buffers_raise(libs, bad):
    with pytest.raises(MXAsyncError, match="decode"):
        codec.decode(bad)


@pytest.mark.parametrize(("img", "msg"), [(np.zeros((4, 4, 3), np.float32), "uint8"),
                                          (np.zeros((4, 4, 2), np.uint8), "shape")])
def test_encode_rejects(img, msg):
    with pytest.raises(MXAsyncError, match=msg):
        codec.encode(img, ".png")


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("shape", [(20, 30, 3), (20, 30, 1), (20, 30), (20, 30, 4)])
@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4, 9])
def test_resize_shapes(libs, dtype, shape, interp):
    img = (np.arange(np.prod(shape)) % 251).reshape(shape).astype(dtype)
    for size in [(15, 10), (45, 33)]:
        out = codec.resize(img, size, interp)
        assert out.shape == (size[1], size[0]) + shape[2:] and out.dtype == dtype


def test_resize_constant_image_stays_constant(libs):
    img = np.full((10, 12, 3), 77, np.uint8)
    for interp in (0, 1, 2, 3, 4):
        out = codec.resize(img, (7, 19), interp)
        assert (out == 77).all()


def test_resize_errors():
    img = np.zeros((4, 4, 3), np.uint8)
    assert codec.resize(img, (4, 4)) is img
    with pytest.raises(MXAsyncError, match="positive"):
        codec.resize(img, (0, 4))
    with pytest.raises(MXAsyncError, match="interp"):
        codec.resize(img, (2, 2), 7)


def test_set_codecs_validates_and_env(monkeypatch):
    with pytest.raises(MXAsyncError, match="unknown image codec"):
        codec.set_codecs(["turbojpeg"])
    monkeypatch.setenv("MXASYNC_IMAGE_CODECS", "pillow")
    assert set(v for v in codec.codecs().values() if v) == {"pillow"}
