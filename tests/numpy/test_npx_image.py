"""``mx.npx.image`` (MXNet 1.9.1's): the image ops on mx.np arrays, mx.image's functions beside them,
and mx.image's results as mx.np arrays under npx.set_np()."""

from __future__ import annotations

import numpy as onp
import pytest

import mxasync as mx
from mxasync import gluon, np, npx
from mxasync.io.image import codec
from mxasync.numpy_extension import image as npx_image


@pytest.fixture
def np_mode():
    npx.set_np()
    try:
        yield
    finally:
        npx.reset_np()


def _png(tmp_path):
    pixels = onp.random.RandomState(0).randint(0, 256, (8, 10, 3)).astype(onp.uint8)
    path = tmp_path / "t.png"
    path.write_bytes(codec.encode(pixels, ".png"))
    return path, pixels


@pytest.mark.parametrize("name,args,kwargs", [
    ("to_tensor", (), {}), ("normalize", (), dict(mean=(0.1, 0.2, 0.3), std=(1.0, 2.0, 3.0))),
    ("resize", ((4, 3),), {}), ("crop", (), dict(x=1, y=2, width=4, height=3)), ("flip_left_right", (), {}),
    ("flip_top_bottom", (), {}), ("adjust_lighting", (), dict(alpha=(0.1, 0.2, 0.3))),
])
def test_ops_give_mx_np_arrays_with_mx_nd_image_values(np_mode, name, args, kwargs):
    x = onp.random.RandomState(1).uniform(0, 1, (6, 5, 3)).astype(onp.float32)
    if name == "normalize":
        x = x.transpose(2, 0, 1).copy()
    got = getattr(npx.image, name)(np.array(x), *args, **kwargs)
    want = getattr(mx.nd.image, name)(mx.nd.array(x), *args, **kwargs)
    assert isinstance(got, np.ndarray)
    onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)


def test_mx_image_results_are_mx_np_arrays_in_numpy_mode(tmp_path):
    path, pixels = _png(tmp_path)
    legacy = npx.image.imread(str(path))
    assert type(legacy) is mx.nd.NDArray
    npx.set_np()
    try:
        img = npx.image.imread(str(path))
        assert isinstance(img, np.ndarray) and img.dtype == onp.uint8
        onp.testing.assert_array_equal(img.asnumpy(), pixels)
        # d2l's BananasDataset: NumPy's transpose(*axes) on what imread gives
        chw = img.astype("float32").transpose(2, 0, 1)
        assert isinstance(chw, np.ndarray) and chw.shape == (3, 8, 10)
        crop, rect = mx.image.random_crop(img, (4, 3))
        for out in (crop, mx.image.fixed_crop(img, *rect), mx.image.imresize(img, 5, 4),
                    mx.image.HorizontalFlipAug(1.0)(img), mx.image.imdecode(path.read_bytes())):
            assert isinstance(out, np.ndarray), type(out)
        onp.testing.assert_array_equal(mx.image.fixed_crop(img, *rect).asnumpy(), crop.asnumpy())
    finally:
        npx.reset_np()


def test_names_are_mx_image_s_beside_the_ops():
    assert npx.image.imresize is mx.image.imresize and npx.image.ImageIter is mx.image.ImageIter
    assert set(npx_image.OPS) <= set(dir(npx.image)) and "imread" in dir(npx.image)
    with pytest.raises(AttributeError, match="no attribute 'imreed'"):
        npx.image.imreed  # noqa: B018


def test_hybridized_block_uses_npx_image(np_mode):
    class Prep(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.npx.image.normalize(F.npx.image.to_tensor(x), mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))

    x = onp.random.RandomState(2).randint(0, 256, (4, 5, 3)).astype(onp.uint8)
    net = Prep()
    eager = net(np.array(x))
    net.hybridize()
    out = net(np.array(x))
    want = (x.transpose(2, 0, 1) / 255.0 - 0.5) / 0.25
    assert isinstance(out, np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(eager.asnumpy(), want, rtol=1e-5, atol=1e-6)
