"""Initializers: statistics of the random ones, name dispatch, attrs, Mixed, Load, registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mxasync as mx
from mxasync import initializer as init
from mxasync.initializer import InitDesc


def _fill(initializer, name, shape, dtype="float32"):
    arr = mx.nd.zeros(shape, dtype=dtype) - 7  # a sentinel no rule writes
    initializer(InitDesc(name), arr)
    return arr.asnumpy()


def test_uniform_and_normal_statistics():
    mx.random.seed(0)
    u = _fill(init.Uniform(0.3), "a_weight", (200, 100))
    assert u.min() >= -0.3 and u.max() <= 0.3 and abs(u.mean()) < 0.01
    assert u.std() == pytest.approx(0.3 / math.sqrt(3), rel=0.03)
    n = _fill(init.Normal(0.5), "a_weight", (200, 100))
    assert abs(n.mean()) < 0.02 and n.std() == pytest.approx(0.5, rel=0.03)


@pytest.mark.parametrize("rnd_type,factor_type,magnitude", [("uniform", "avg", 3), ("gaussian", "in", 2),
                                                            ("uniform", "out", 6)])
def test_xavier_scale(rnd_type, factor_type, magnitude):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    scale = math.sqrt(magnitude / factor)
    w = _fill(init.Xavier(rnd_type, factor_type, magnitude), "conv_weight", shape)
    std = scale / math.sqrt(3) if rnd_type == "uniform" else scale
    assert w.std() == pytest.approx(std, rel=0.05) and abs(w.mean()) < 0.1 * scale
    if rnd_type == "uniform":
        assert np.abs(w).max() <= scale


def test_msra_prelu_and_xavier_errors():
    w = _fill(init.MSRAPrelu(factor_type="in", slope=0.0), "fc_weight", (300, 400))
    assert w.std() == pytest.approx(math.sqrt(2 / 400), rel=0.05)
    with pytest.raises(ValueError, match="at least 2D"):
        _fill(init.Xavier(), "fc_weight", (5,))
    with pytest.raises(ValueError, match="factor type"):
        _fill(init.Xavier(factor_type="bad"), "fc_weight", (5, 5))


def test_orthogonal_is_orthogonal():
    w = _fill(init.Orthogonal(scale=1.0), "fc_weight", (4, 6))
    np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-5)


@pytest.mark.parametrize("name,expected", [("fc_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0),
                                           ("bn_moving_mean", 0.0), ("bn_moving_var", 1.0), ("q_min", 0.0),
                                           ("q_max", 1.0), ("fc_weight", 0.25)])
def test_name_dispatch(name, expected):
    np.testing.assert_array_equal(_fill(init.Constant(0.25), name, (3,)), expected)


def test_unknown_name_and_init_attr():
    with pytest.raises(ValueError, match="Unknown initialization pattern for data"):
        _fill(init.Zero(), "data", (2,))
    arr = mx.nd.zeros((2, 2))
    init.Zero()(InitDesc("fc_bias", attrs={"__init__": init.Constant(3.0).dumps()}), arr)
    assert arr.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    var = mx.sym.Variable("v", init=init.One())
    desc = InitDesc("v", attrs=var.attr_dict().get("v", {}))
    arr = mx.nd.zeros((2,))
    init.Zero()(desc, arr)
    assert arr.asnumpy().tolist() == [1.0, 1.0] and desc.global_init is not None


def test_mixed_patterns():
    mixed = init.Mixed(["fc1.*", ".*bias", ".*"], [init.Constant(1.0), init.Constant(2.0), init.Zero()])
    out = {}
    for name in ["fc1_weight", "fc2_bias", "fc2_weight"]:
        arr = mx.nd.ones((2,)) * 9
        mixed(InitDesc(name), arr)
        out[name] = arr.asnumpy()[0]
    # fc2_bias matches ".*bias" and takes Constant's bias rule (0); fc1_weight takes the weight rule
    assert out == {"fc1_weight": 1.0, "fc2_bias": 0.0, "fc2_weight": 0.0}
    with pytest.raises(ValueError, match="did not match"):
        init.Mixed(["a.*"], [init.Zero()])(InitDesc("b_weight"), mx.nd.zeros((1,)))


def test_load_from_dict_and_file(tmp_path):
    saved = {"arg:fc_weight": mx.nd.array([[1.0, 2.0]]), "aux:bn_moving_var": mx.nd.array([4.0])}
    loader = init.Load(saved, default_init=init.Constant(5.0))
    w, mv, b = mx.nd.zeros((1, 2)), mx.nd.zeros((1,)), mx.nd.zeros((3,))
    loader("fc_weight", w)
    loader("bn_moving_var", mv)
    loader(InitDesc("other_weight"), b)
    assert w.asnumpy().tolist() == [[1.0, 2.0]] and mv.asnumpy().tolist() == [4.0] and b.asnumpy()[0] == 5.0
    with pytest.raises(ValueError, match="Shape mismatch"):
        loader("fc_weight", mx.nd.zeros((2, 2)))
    with pytest.raises(ValueError, match="no default"):
        init.Load(saved)("missing", mx.nd.zeros((1,)))
    path = str(tmp_path / "p.params")
    mx.nd.save(path, saved)
    w2 = mx.nd.zeros((1, 2))
    init.Load(path)("fc_weight", w2)
    assert w2.asnumpy().tolist() == [[1.0, 2.0]]


def test_registry_create_dumps():
    x = init.create("xavier", magnitude=2)
    assert isinstance(x, init.Xavier) and x.magnitude == 2.0
    assert init.create(x.dumps()) == x and isinstance(init.create("zeros"), init.Zero)
    assert init.create(init.One()) == init.One()
    with pytest.raises(ValueError, match="Cannot find initializer"):
        init.create("nope")

    @init.register
    class _TestInit(init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 42

    np.testing.assert_array_equal(_fill(init.create("_testinit"), "a_weight", (2,)), 42)


def test_legacy_string_call_and_bilinear():
    arr = mx.nd.zeros((2,))
    with pytest.warns(DeprecationWarning):
        init.One()("fc_bias", arr)
    assert arr.asnumpy().tolist() == [0.0, 0.0]
    k = _fill(init.Bilinear(), "up_weight", (1, 1, 4, 4))
    np.testing.assert_allclose(k[0, 0, 0], [0.0625, 0.1875, 0.1875, 0.0625])
    bias = _fill(init.LSTMBias(forget_bias=2.0), "lstm_weight", (8,))
    assert bias.tolist() == [0, 0, 2, 2, 0, 0, 0, 0]
