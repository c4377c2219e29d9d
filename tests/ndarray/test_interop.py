"""NDArray interop as MXNet 1.9: __array__, DLPack both ways, zero-copy from_numpy, raw-bytes state,
reshape codes, inplace views, truth values, moveaxis with sequences."""

import pickle

import numpy as np
import pytest

import mxasync as mx


def test_array_protocol_and_numpy_functions():
    a = mx.nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(a), [[1, 2], [3, 4]])
    assert np.asarray(a, dtype=np.int32).dtype == np.int32
    with pytest.raises(ValueError):
        a.__array__(copy=False)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_dlpack_round_trip_shares_memory(dtype):
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype=dtype)
    b = mx.nd.from_dlpack(a.to_dlpack_for_read())
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    c = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(a))
    c[:] = 7
    assert (a.asnumpy() == 7).all()  # shares a's memory
    d = mx.nd.from_dlpack(np.arange(3.0))  # any __dlpack__ producer
    assert d.asnumpy().tolist() == [0.0, 1.0, 2.0]
    assert np.from_dlpack(a).tolist() == a.asnumpy().tolist()


def test_from_numpy_zero_copy_and_refusals():
    src = np.array([[1, 2], [3, 4]], dtype=np.float32)
    x = mx.nd.from_numpy(src)
    with pytest.raises(ValueError):
        src[0, 0] = 5  # the NDArray owns it now
    x[1, 1] = 100
    x.wait_to_read()
    assert src[1, 1] == 100
    with pytest.raises(ValueError):
        mx.nd.from_numpy(np.ones((2, 3)).T)
    y = mx.nd.from_numpy(np.ones((2, 3)).T, zero_copy=False)
    assert y.shape == (3, 2)
    assert mx.nd.from_numpy(np.zeros((1, 0, 2))).shape == (1, 0, 2)


def test_getstate_is_mxnet_raw_bytes():
    # bytes of mx.nd.arange(3).__getstate__() from MXNet 1.9.1
    mxnet_state = {"handle": bytearray(
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00"
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@")}
    assert mx.nd.arange(3).__getstate__() == mxnet_state
    b = mx.nd.zeros((1,))
    b.__setstate__(mxnet_state)
    assert b.asnumpy().tolist() == [0.0, 1.0, 2.0]
    gpu_state = {"handle": bytearray(
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00"
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}
    if mx.num_gpus() == 0:
        b.__setstate__(gpu_state)
        assert b.context == mx.cpu() and b.asnumpy().tolist() == [0.0]
    assert pickle.loads(pickle.dumps(mx.nd.ones((2,)))).asnumpy().tolist() == [1.0, 1.0]


def test_reshape_codes_and_inplace_views():
    x = mx.nd.arange(30).reshape((2, 3, 5))
    assert x.reshape(-2).shape == (2, 3, 5)
    assert x.reshape((-3, -2)).shape == (6, 5) and x.reshape((0, -4, 1, -1, 0)).shape == (2, 1, 3, 5)
    assert x.reshape((-1, 0), reverse=True).shape == (6, 5)
    with pytest.raises(mx.MXNetError):
        x.reshape((7, -1))
    for view in (x.flatten(inplace=True), x.expand_dims(1, inplace=True), x[0:1].squeeze(inplace=True)):
        view[:] = -1
        assert (x.asnumpy()[0] == -1).all()
        x[:] = 0
    assert x.flatten().shape == (2, 15) and x.expand_dims(-1).shape == (2, 3, 5, 1)
    with pytest.raises(mx.MXNetError):
        x.squeeze(axis=0, inplace=True)


def test_truth_values():
    assert not bool(mx.nd.array([])) and not bool(mx.nd.zeros((1,))) and bool(mx.nd.ones((1,)))
    with pytest.raises(ValueError):
        bool(mx.nd.ones((2, 3)))


def test_moveaxis_sequences_and_errors():
    x = mx.nd.zeros((4, 1, 2, 3))
    assert mx.nd.moveaxis(x, [3, 0], [1, 0]).shape == np.moveaxis(np.zeros((4, 1, 2, 3)), [3, 0], [1, 0]).shape
    assert mx.nd.moveaxis(x, range(4), range(4)).shape == (4, 1, 2, 3)
    for src, dst in ((4, 0), ([0, 0], [0, 1]), ([0, 1], [0])):
        with pytest.raises(ValueError):
            mx.nd.moveaxis(x, src, dst)


def test_setitem_forms():
    x = mx.nd.zeros((3, 4, 2))
    x[2, ...] = 1
    x[..., 0] = mx.nd.ones((1, 1, 3, 4)) * 2  # extra leading ones are dropped, as MXNet
    ref = np.zeros((3, 4, 2))
    ref[2, ...] = 1
    ref[..., 0] = 2
    np.testing.assert_array_equal(x.asnumpy(), ref)


def test_basic_indexing_slice_is_contiguous():
    f = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    ref = np.zeros((6, 7))
    for key in [(slice(None), slice(2)), (slice(1, 4), slice(None)), (slice(None, None, 2), slice(None)),
                (slice(0, 1), slice(None, None, -1))]:
        assert f(key, (6, 7)) == ref[key].flags.contiguous


def test_inplace_write_of_a_recorded_value_is_refused():
    x = mx.nd.zeros((3,))
    y = mx.nd.ones((3,))
    y.attach_grad()
    with mx.autograd.record():
        with pytest.raises(mx.MXNetError, match="Inplace operations"):
            x[:] = y
        with pytest.raises(mx.MXNetError, match="Inplace operations"):
            x += y
    x[:] = y  # outside record: fine
    assert x.asnumpy().tolist() == [1.0, 1.0, 1.0]


def test_creation_out_and_reshape_value_error():
    out = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=out) is out and out.asnumpy().tolist() == [[1, 1], [1, 1]]
    mx.nd.full((2, 2), 3, out=out)
    assert (out.asnumpy() == 3).all()
    with pytest.raises(ValueError):
        mx.nd.zeros((3,), out=out)
    with pytest.raises(ValueError):
        mx.nd.ones((2, 3, 5)).reshape((2, 3))


def test_contrib_checks_and_internal_namespace():
    d = mx.nd.array([np.inf, -np.inf, np.nan, 5.0])
    assert mx.nd.contrib.isinf(d).asnumpy().tolist() == [1, 1, 0, 0]
    assert mx.nd.contrib.isfinite(d).asnumpy().tolist() == [0, 0, 0, 1]
    assert mx.nd.contrib.isnan(d).asnumpy().tolist() == [0, 0, 1, 0]
    x = mx.nd.ones((2, 3))
    mx.nd._internal._crop_assign_scalar(x, scalar=5, begin=(0, 0), end=(1, 2), out=x)
    assert x.asnumpy().tolist() == [[5, 5, 1], [1, 1, 1]]
    mx.random.seed(3)
    sampled, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([0, 4]), 50, 10)
    s = sampled.asnumpy()
    assert sampled.dtype == np.int64 and s.min() >= 0 and s.max() < 10
    p = np.log((np.array([0, 4]) + 2) / (np.array([0, 4]) + 1)) / np.log(11)
    np.testing.assert_allclose(exp_true.asnumpy(), p * 50)
    np.testing.assert_allclose(exp_sampled.asnumpy(), np.log((s + 2) / (s + 1)) / np.log(11) * 50)


def test_from_numpy_twice_shares_again():
    src = np.arange(4.0)
    a = mx.nd.from_numpy(src)
    b = mx.nd.from_numpy(src)  # already locked: shared again, as MXNet
    b[0] = 7
    b.wait_to_read()
    assert src[0] == 7 and a.asnumpy()[0] == 7


def test_a_bare_capsule_says_its_device():
    """MXNet hands out bare DLPack capsules; the device is read from the DLTensor they point to."""
    from mxasync.ndarray._interop import _capsule_device

    a = mx.nd.array([1.0, 2.0])
    assert _capsule_device(a.to_dlpack_for_read()) == (1, 0)
    assert _capsule_device(object()) is None


def test_a_bare_cuda_capsule_goes_to_cupy_not_numpy():
    """A capsule of CUDA memory (crafted here: a DLTensor head on device kDLCUDA:3) is routed to CuPy;
    without CuPy the error says so instead of numpy's 'unsupported device'."""
    import ctypes

    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy installed: the GPU tests cover the real path")
    except ImportError:
        pass
    from mxasync.ndarray._interop import _DLTensorHead

    head = _DLTensorHead()
    head.device.device_type, head.device.device_id = 2, 3
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new(ctypes.addressof(head), b"dltensor", None)
    with pytest.raises(mx.MXNetError, match=r"CUDA memory \(device 3\).*CuPy"):
        mx.nd.from_dlpack(capsule)
