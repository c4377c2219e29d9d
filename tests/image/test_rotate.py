"""mx.image.imrotate / random_rotate: rotation about the centre (checked against exact quarter turns)."""

import numpy as np
import pytest

import mxasync as mx


def test_quarter_turn_is_rot90():
    a = np.random.default_rng(0).random((2, 5, 5)).astype(np.float32)
    out = mx.image.imrotate(mx.nd.array(a), 90).asnumpy()
    assert np.allclose(out, np.rot90(a, 1, axes=(1, 2)), atol=1e-5)


def test_batch_angles_and_zoom():
    a = np.random.default_rng(1).random((3, 1, 6, 8)).astype(np.float32)
    batch = mx.image.imrotate(mx.nd.array(a), mx.nd.array([0, 90, 180]))
    assert batch.shape == (3, 1, 6, 8)
    assert np.allclose(batch.asnumpy()[0], a[0], atol=1e-5)
    assert np.allclose(batch.asnumpy()[2], a[2, :, ::-1, ::-1], atol=1e-5)
    # zoom_out at 90 degrees shrinks the picture: the border is empty; zoom_in keeps corners filled
    out = mx.image.imrotate(mx.nd.array(np.ones((1, 6, 8), np.float32)), 45, zoom_in=True).asnumpy()
    assert out.min() > 0.9  # without zoom_in the corners are empty (0)
    assert mx.image.imrotate(mx.nd.array(np.ones((1, 6, 8), np.float32)), 45).asnumpy()[0, 0, 0] == 0
    out = mx.image.imrotate(mx.nd.array(np.ones((1, 6, 8), np.float32)), 45, zoom_out=True).asnumpy()
    assert out[0, 0, 0] == 0


def test_errors_and_random_rotate():
    img = mx.nd.ones((1, 4, 4))
    with pytest.raises(ValueError):
        mx.image.imrotate(img, 10, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError):
        mx.image.imrotate(img, mx.nd.array([1, 2]))
    with pytest.raises(TypeError):
        mx.image.imrotate(mx.nd.ones((1, 4, 4), dtype="float64"), 10)
    with pytest.raises(ValueError):
        mx.image.imrotate(mx.nd.ones((2, 1, 4, 4)), mx.nd.array([1, 2, 3]))
    assert mx.image.random_rotate(mx.nd.ones((2, 1, 4, 4)), (-5, 5)).shape == (2, 1, 4, 4)
    with pytest.raises(mx.MXNetError):
        mx.img.image.imread("/no/such/dir/x.jpg")
