"""Backends as plugins: discovery, lazy start, failure reporting, the toy third-party backend."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import mxasync as mx
import mxasync.backends as mx_backends
from mxasync.backends import Backend, BackendWarning, get_backend, list_backends, registry
from mxasync.base import MXAsyncError
from mxasync.operator import OpContext, get_op
from mxasync.operator.base import WRITE_TO


def test_builtin_backends_are_entry_points():
    names = {b["name"]: b for b in mx_backends.list()}
    assert names["numpy"]["device_type"] == "cpu"
    assert names["cupy"]["device_type"] == "gpu"
    assert get_backend("cpu").xp is np


def test_cupy_backend_imports_without_cupy_and_reports_unavailable():
    try:
        import cupy  # noqa: F401

        pytest.skip("cupy is installed")
    except ImportError:
        pass
    with pytest.raises(MXAsyncError, match="no backend available for device type 'gpu'.*cupy: unavailable"):
        get_backend("gpu")
    info = {b["name"]: b for b in list_backends()}["cupy"]
    assert info["state"] == "unavailable" and "cupy" in (info["error"] or "").lower()


def test_toy_plugin_discovery_override_and_generic_op(toy_plugin, monkeypatch):
    monkeypatch.setenv("MXASYNC_TOY_BROKEN", "1")
    monkeypatch.delitem(sys.modules, "mxasync_toy_backend.broken", raising=False)
    registry.reset()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        infos = {b["name"]: b for b in list_backends()}
        list_backends()
    broken = [x for x in w if issubclass(x.category, BackendWarning)]
    assert len(broken) == 1 and "toy_broken" in str(broken[0].message) and "on purpose" in str(broken[0].message)
    assert infos["toy_broken"]["state"] == "failed"
    assert infos["toy"]["device_type"] == "cpu_shared"
    # a plugin never takes a built-in device type over unasked, whatever its priority
    assert get_backend("cpu_shared").name == "numpy_shared"
    registry.use("cpu_shared", "toy")
    toy = get_backend("cpu_shared")
    assert toy.name == "toy" and get_backend("cpu").name == "numpy"  # the broken one broke nothing
    ctx = mx.cpu_shared()
    x = np.array([-1.0, 2.0])
    out = np.empty(2)
    get_op("relu").prepare().forward_fn(ctx)(OpContext(), [x], [WRITE_TO], [out], [])
    np.testing.assert_array_equal(out, [0.0, 2.0])
    assert toy.xp.calls.get("toy_relu") == 1  # the override ran
    get_op("exp").prepare().forward_fn(ctx)(OpContext(), [x], [WRITE_TO], [out], [])
    np.testing.assert_allclose(out, np.exp(x))
    assert toy.xp.calls.get("exp", 0) >= 1  # the generic op went through the toy namespace


def test_register_backend_directly():
    class Mem(Backend):
        name, device_type, priority = "mem_test", "cpu_pinned", 99

        def start(self):
            self.xp = np

    registry.register_backend(Mem())
    assert get_backend("cpu_pinned").name == "numpy_pinned"  # built-in device types stay built-in
    registry.use("cpu_pinned", "mem_test")
    assert get_backend("cpu_pinned").name == "mem_test"
    registry.reset()
    assert get_backend("cpu_pinned").name == "numpy_pinned"


def test_a_refused_plugin_warns_once_and_only_where_its_device_type_is_asked_for(toy_plugin):
    registry.reset()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert get_backend("cpu").name == "numpy"
        infos = {b["name"]: b for b in list_backends()}
        assert not [x for x in w if "toy_future" in str(x.message)]  # a cpu-only process hears nothing of it
        for _ in range(2):
            with pytest.raises(MXAsyncError, match="unknown device type 'toy_future'"):
                mx.Context("toy_future", 0)
    future = [x for x in w if issubclass(x.category, BackendWarning) and "toy_future" in str(x.message)]
    assert len(future) == 1 and "plugin API version 2; this mxasync implements version 1" in str(future[0].message)
    info = infos["toy_future"]
    assert info["state"] == "failed" and info["device_type"] == "toy_future" and "version 2" in info["error"]
