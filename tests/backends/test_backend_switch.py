"""Switching the backend of a device type late (``mx.backends.use``): no op keeps the old backend's kernels."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync.backends import Backend, get_backend, registry


class _Counting(Backend):
    name, device_type = "switch_cpu", "cpu"

    def __init__(self):
        super().__init__()
        self.calls: list[str] = []
        self.overrides["relu"] = self._relu
        self.overrides["exp"] = self._exp

    def start(self):
        self.xp = np

    def _relu(self, xp, params, x):
        self.calls.append("relu")
        return xp.maximum(x, 0)

    def _exp(self, xp, params, x):
        self.calls.append("exp")
        return xp.exp(x)


@pytest.fixture
def switchable():
    registry.reset()
    backend = _Counting()
    registry.register_backend(backend)
    try:
        yield backend
    finally:
        registry.reset()


def test_ops_that_already_ran_take_the_new_backends_kernels(switchable):
    x = mx.nd.array([-1.0, 2.0])
    data = mx.sym.Variable("data")
    ex = mx.sym.relu(data).bind(mx.cpu(), {"data": x})
    for _ in range(2):  # the imperative plans and the executor's steps are cached by now
        assert mx.nd.relu(x).asnumpy().tolist() == [0.0, 2.0]
        mx.nd.exp(x).wait_to_read()
        assert ex.forward()[0].asnumpy().tolist() == [0.0, 2.0]
    assert switchable.calls == [] and get_backend("cpu").name == "numpy"

    mx.backends.use("cpu", "switch_cpu")
    assert get_backend("cpu") is switchable
    assert mx.nd.relu(x).asnumpy().tolist() == [0.0, 2.0]
    np.testing.assert_allclose(mx.nd.exp(x).asnumpy(), np.exp([-1.0, 2.0]), rtol=1e-6)
    assert ex.forward()[0].asnumpy().tolist() == [0.0, 2.0]
    assert switchable.calls == ["relu", "exp", "relu"]

    mx.backends.use("cpu", None)  # back to the built-in one: its kernels again
    assert get_backend("cpu").name == "numpy"
    mx.nd.relu(x).wait_to_read()
    ex.forward()[0].wait_to_read()
    assert switchable.calls == ["relu", "exp", "relu"]


def test_a_selected_name_nobody_installed_is_refused_naming_the_candidates(switchable):
    mx.backends.use("cpu", "no_such_backend")
    with pytest.raises(mx.MXNetError, match="no installed backend 'no_such_backend'.*candidates: numpy, switch_cpu"):
        get_backend("cpu")
