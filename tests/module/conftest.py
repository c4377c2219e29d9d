"""Small networks and data shared by the Module tests."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import mxasync as mx
from mxasync.io.datasets import digits_split


def mlp(hidden: int = 32, classes: int = 10):
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=hidden, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=classes, name="fc2"), name="softmax")


def bn_mlp(hidden: int = 32, classes: int = 10):
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=hidden, name="fc1")
    h = mx.sym.Activation(mx.sym.BatchNorm(h, fix_gamma=False, name="bn1"), act_type="relu", name="relu1")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=classes, name="fc2"), name="softmax")


def digits_flat(split: str) -> tuple[np.ndarray, np.ndarray]:
    """The 8x8 digits as standardised 64-vectors (float32) and float labels."""
    x, y = digits_split(split)
    x = x.reshape(len(x), -1).astype(np.float32) / 16.0
    return (x - 0.3) / 0.4, y.astype(np.float32)


def fixed_params(sym, data_shape: tuple, seed: int = 0) -> tuple[dict, dict]:
    """Deterministic parameters for ``sym`` (so runs can be compared without an initializer)."""
    rng = np.random.default_rng(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(data=data_shape)
    args = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes, strict=True):
        if name in ("data", "softmax_label"):
            continue
        scale = 0.0 if name.endswith(("_bias", "_beta")) else np.sqrt(2.0 / shape[-1])
        value = rng.standard_normal(shape) * scale + (1.0 if name.endswith("_gamma") else 0.0)
        args[name] = mx.nd.array(value.astype(np.float32))
    aux = {name: mx.nd.ones(shape) if name.endswith("var") else mx.nd.zeros(shape)
           for name, shape in zip(sym.list_auxiliary_states(), aux_shapes, strict=True)}
    return args, aux


@pytest.fixture
def nets():
    """The helpers above: ``nets.mlp()``, ``nets.bn_mlp()``, ``nets.digits_flat(split)``, ``nets.fixed_params``."""
    return SimpleNamespace(mlp=mlp, bn_mlp=bn_mlp, digits_flat=digits_flat, fixed_params=fixed_params)
