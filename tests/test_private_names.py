"""Module-level names that MXNet 1.9.1's own test files import from its private modules
(``mxnet.base``, ``mxnet.ndarray.ndarray``, ``mxnet.util``, ``mxnet.test_utils``), with MXNet's meaning."""

import ctypes
import os

import numpy as np
import pytest

import mxasync as mx


def test_base_ctypes_names_and_data_dir(monkeypatch):
    from mxasync.base import (
        NDArrayHandle,
        SymbolHandle,
        _as_list,
        c_array,
        c_str_array,
        data_dir,
        data_dir_default,
        mx_float,
        mx_uint,
    )

    assert NDArrayHandle is ctypes.c_void_p and SymbolHandle is ctypes.c_void_p and mx_uint is ctypes.c_uint
    assert list(c_str_array(["a", "é"])) == [b"a", "é".encode()]
    assert list(c_array(mx_float, [1.5, 2.0])) == [1.5, 2.0]
    assert _as_list(1) == [1] and _as_list([1]) == [1]
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert data_dir() == data_dir_default() == os.path.join(os.path.expanduser("~"), ".mxnet")
    monkeypatch.setenv("MXNET_HOME", "/tmp/mxnet_data")
    assert data_dir() == "/tmp/mxnet_data"
    from mxasync.gluon.model_zoo.model_store import data_dir as zoo_dir
    assert zoo_dir() == "/tmp/mxnet_data"


def test_storage_type_tables():
    from mxasync.ndarray.ndarray import (
        _STORAGE_TYPE_CSR,
        _STORAGE_TYPE_ID_TO_STR,
        _STORAGE_TYPE_ROW_SPARSE,
        _STORAGE_TYPE_STR_TO_ID,
    )

    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
    assert _STORAGE_TYPE_ID_TO_STR == {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
    assert (_STORAGE_TYPE_ROW_SPARSE, _STORAGE_TYPE_CSR) == (1, 2)
    p = mx.gluon.Parameter("w", shape=(2, 2), stype="row_sparse")
    assert p.var().attr("__storage_type__") == str(_STORAGE_TYPE_STR_TO_ID["row_sparse"])  # test_gluon's check
    assert mx.test_utils._STORAGE_TYPE_STR_TO_ID is _STORAGE_TYPE_STR_TO_ID


def test_util_scope_classes():
    from mxasync.util import _NumpyArrayScope, _NumpyShapeScope

    assert _NumpyArrayScope(True)._is_np_array and not _NumpyArrayScope(False)._is_np_array
    with mx.util.np_array(True) as scope:
        assert isinstance(scope, _NumpyArrayScope) and mx.util.is_np_array()
    assert not mx.util.is_np_array()
    assert isinstance(mx.np_shape(True), _NumpyShapeScope)


def test_test_utils_names():
    from mxasync.test_utils import DummyIter, Features, check_gluon_hybridize_consistency, np_symbol  # noqa: F401

    assert mx.runtime.Features is Features
    it = DummyIter(mx.io.NDArrayIter(np.arange(8.0).reshape(4, 2), batch_size=2))
    first = next(it)
    assert [next(it) is first for _ in range(3)] == [True] * 3  # never StopIteration
    assert it.batch_size == 2 and it.provide_data[0].shape == (2, 2)


class _Affine(mx.gluon.HybridBlock):
    def __init__(self, flip=False, **kwargs):
        super().__init__(**kwargs)
        self.flip = flip
        with self.name_scope():
            self.w = self.params.get("w", shape=(3,))

    def hybrid_forward(self, F, x, w):
        out = F.broadcast_mul(x, w.reshape((1, 3)))
        if self.flip and F is mx.nd:  # an imperative-only difference the check must catch
            out = out * -1
        return out


def test_check_gluon_hybridize_consistency():
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    mx.test_utils.check_gluon_hybridize_consistency(lambda prefix=None: _Affine(prefix=prefix), [x])
    with pytest.raises(AssertionError):
        mx.test_utils.check_gluon_hybridize_consistency(lambda prefix=None: _Affine(True, prefix=prefix), [x])
    with pytest.raises(AssertionError):  # against a wrong NumPy reference
        mx.test_utils.check_gluon_hybridize_consistency(lambda prefix=None: _Affine(prefix=prefix), [x],
                                                         numpy_func=lambda a: a + 1)
