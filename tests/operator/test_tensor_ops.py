"""The MXNet 1.x ops of ``ops_extra_*``: small expected values taken from MXNet 1.9.1."""

from __future__ import annotations

import numpy as np
import pytest
from harness import backward, forward, prepare

import mxasync as mx

X = np.array([[3.0, 1, 2, 5], [0, 4, 7, 6]], dtype=np.float32)


def _grad(op, params, inputs, head):
    outs = forward(op, params, [x.copy() for x in inputs])
    heads = [np.asarray(head, dtype=outs[0].dtype)] + [np.zeros(o.shape, o.dtype) for o in outs[1:]]
    return backward(op, params, inputs, outs, heads)[0]


def test_topk_return_types_and_order():
    v, i = forward("topk", dict(k=2, ret_typ="both"), [X])
    np.testing.assert_array_equal(v, [[5, 3], [7, 6]])
    np.testing.assert_array_equal(i, [[3, 0], [2, 3]])
    (m,) = forward("topk", dict(k=2, ret_typ="mask"), [X])
    np.testing.assert_array_equal(m, [[1, 0, 0, 1], [0, 0, 1, 1]])
    v, i = forward("topk", dict(k=2, ret_typ="both", is_ascend=True), [X])
    np.testing.assert_array_equal(v, [[1, 2], [0, 4]])
    np.testing.assert_array_equal(i, [[1, 2], [0, 1]])
    v, i = forward("topk", dict(k=3, axis=None, ret_typ="both"), [X])
    np.testing.assert_array_equal(v, [7, 6, 5])
    np.testing.assert_array_equal(i, [6, 7, 3])
    (v, _) = forward("topk", dict(k=0, ret_typ="value"), [X])
    np.testing.assert_array_equal(v, [[5, 3, 2, 1], [7, 6, 4, 0]])


def test_topk_types_and_outputs():
    p = prepare("topk", dict(k=2, ret_typ="both", dtype="int32"))
    assert p.infer_type(["float64"])[1] == ["float64", "int32"]
    assert prepare("topk", dict(k=2, ret_typ="mask", dtype="int32")).infer_type(["float64"])[1] == ["float64"]
    assert prepare("argsort", dict(dtype="int32")).infer_type(["float64"])[1] == ["int32"]
    d = mx.sym.Variable("d")
    assert mx.sym.topk(d, k=2, ret_typ="value", name="t").list_outputs() == ["t_output0"]
    assert mx.sym.topk(d, k=2, ret_typ="both", name="t").list_outputs() == ["t_output0", "t_output1"]
    assert mx.sym.argsort(d, name="a").list_outputs() == ["a_output"]
    with pytest.raises(mx.MXAsyncError, match="k=5"):
        p = prepare("topk", dict(k=5))
        p.infer_shape([(2, 4)])


def test_ties_keep_their_order_both_ways():
    y = np.array([[1.0, 1, 1, 0]], dtype=np.float32)
    _, i = forward("topk", dict(k=2, ret_typ="both"), [y])
    np.testing.assert_array_equal(i, [[0, 1]])
    np.testing.assert_array_equal(forward("argsort", {}, [y])[0], [[3, 0, 1, 2]])
    np.testing.assert_array_equal(forward("argsort", dict(is_ascend=False), [y])[0], [[0, 1, 2, 3]])


def test_sort_and_topk_gradients_go_to_the_original_positions():
    g = _grad("topk", dict(k=2, ret_typ="value"), [X], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(g, [[2, 0, 0, 1], [0, 0, 3, 4]])
    g = _grad("topk", dict(k=1, axis=0, ret_typ="value", is_ascend=True), [X], [[1, 2, 3, 4]])
    np.testing.assert_array_equal(g, [[0, 2, 3, 4], [1, 0, 0, 0]])
    g = _grad("sort", dict(is_ascend=False), [X], np.arange(1, 9).reshape(2, 4))
    np.testing.assert_array_equal(g, [[2, 4, 3, 1], [8, 7, 5, 6]])


def test_pick_modes_and_gradient():
    np.testing.assert_array_equal(forward("pick", dict(axis=1), [X, np.array([1.0, 5], np.float32)])[0], [1, 6])
    idx = np.array([-1.0, 5], np.float32)
    np.testing.assert_array_equal(forward("pick", dict(axis=1), [X, idx])[0], [3, 6])
    np.testing.assert_array_equal(forward("pick", dict(axis=1, mode="wrap"), [X, idx])[0], [5, 4])
    np.testing.assert_array_equal(forward("pick", dict(axis=0), [X, np.array([1.0, 0, 0, 1], np.float32)])[0],
                                  [0, 1, 2, 6])
    out = forward("pick", dict(axis=1, keepdims=True), [X, np.array([[1.0], [2]], np.float32)])[0]
    np.testing.assert_array_equal(out, [[1], [7]])
    g = backward("pick", dict(axis=1, mode="wrap"), [X, idx], [None], [np.array([1.0, 2], np.float32)])[0]
    np.testing.assert_array_equal(g, [[0, 0, 0, 1], [0, 2, 0, 0]])


def test_sequence_mask_axes():
    x = np.arange(24, dtype=np.float32).reshape(3, 2, 4) + 1
    lens = np.array([1.0, 3], np.float32)
    out = forward("SequenceMask", dict(use_sequence_length=True, value=-1), [x, lens])[0]
    np.testing.assert_array_equal(out[:, :, 0], [[1, 5], [-1, 13], [-1, 21]])
    x2 = x.reshape(2, 3, 4)
    out = forward("SequenceMask", dict(use_sequence_length=True, value=-1, axis=1), [x2, lens])[0]
    np.testing.assert_array_equal(out[:, :, 0], [[1, -1, -1], [13, 17, 21]])
    head = np.arange(1, 25, dtype=np.float32).reshape(3, 2, 4)
    g = backward("SequenceMask", dict(use_sequence_length=True, value=-1), [x, lens], [None], [head])[0]
    np.testing.assert_array_equal(g[:, :, 0], [[1, 5], [0, 13], [0, 21]])
    assert mx.sym.SequenceMask(mx.sym.Variable("d")).list_arguments() == ["d"]


@pytest.mark.parametrize("mode,first,last", [
    ("instance", [0.03922323, 0.19611613, 0.35300905], [0.3221253, 0.3374646, 0.3528039, 0.3681432]),
    ("channel", [0.09667365, 0.48336828, 0.8700629], [0.7003892, 0.6943138, 0.6887956, 0.68376344]),
    ("spatial", [0.18257418, 0.37904903, 0.42616236], [0.46609157, 0.4882864, 0.51048124, 0.5326761]),
])
def test_l2_normalization_modes(mode, first, last):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) + 1
    y = forward("L2Normalization", dict(mode=mode), [x])[0]
    np.testing.assert_allclose(y[0, :, 0, 0], first, rtol=1e-5)
    np.testing.assert_allclose(y[1, 2].ravel(), last, rtol=1e-5)


def test_l2_normalization_channel_needs_3d():
    with pytest.raises(mx.MXAsyncError, match="channel"):
        prepare("L2Normalization", dict(mode="channel")).infer_shape([(2, 2)])


def test_upsampling_nearest():
    a = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    out = forward("UpSampling", dict(scale=2, sample_type="nearest"), [a])[0]
    np.testing.assert_array_equal(out[0, 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])
    out = forward("UpSampling", dict(scale=2, sample_type="nearest", num_args=2, multi_input_mode="sum"),
                  [a, np.ones((1, 1, 4, 4), np.float32)])[0]
    np.testing.assert_array_equal(out[0, 0, 0], [1, 1, 2, 2])
    p = prepare("UpSampling", dict(scale=3, num_filter=2, sample_type="bilinear"))
    assert p.infer_shape([(1, 2, 2, 2), None]) == ([(1, 2, 2, 2), (2, 1, 5, 5)], [(1, 2, 6, 6)], [])
    with pytest.raises(mx.MXAsyncError, match="input 1"):
        prepare("UpSampling", dict(scale=2, sample_type="nearest", num_args=2)).infer_shape([(1, 1, 2, 2),
                                                                                             (1, 1, 8, 8)])


def test_instance_norm_and_softmax_activation():
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(np.float32)
    g, b = np.array([1.0, 2, 3], np.float32), np.array([0.0, 0.5, 1], np.float32)
    y = forward("InstanceNorm", {}, [x, g, b])[0]
    np.testing.assert_allclose(y[0, 0], [-1.3411044, -0.4470348, 0.4470348, 1.3411044], rtol=1e-5)
    np.testing.assert_allclose(y[1, 2], [-3.023313, -0.3411044, 2.3411045, 5.023313], rtol=1e-5)
    z = np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 5
    np.testing.assert_allclose(forward("SoftmaxActivation", {}, [z])[0][0, 0], [0.450166, 0.549834], rtol=1e-5)
    np.testing.assert_allclose(forward("SoftmaxActivation", dict(mode="channel"), [z])[0][0, :, 0],
                               [0.21198273, 0.31624106, 0.47177625], rtol=1e-5)


SPECIAL = {  # op: (x, MXNet's f(x), MXNet's f'(x)) in float64
    "erf": ([-2.5, -0.3, 0.2, 1.0, 3.7], [-0.99959305, -0.32862676, 0.22270259, 0.84270079, 0.99999983],
            [2.17828416e-03, 1.03126088, 1.08413475, 0.41510749, 1.27927405e-06]),
    "erfinv": ([-0.99, -0.3, 0.0, 0.5, 0.999999], [-1.82138637, -0.27246271, 0.0, 0.47693628, 3.45891074],
               [24.4508772, 0.954520390, 0.886226925, 1.11258485, 139146.314]),
    "gamma": ([-2.5, -0.5, 0.3, 1.0, 4.5, 20.0], [-9.45308720e-01, -3.54490770, 2.99156899, 1.0, 11.6317284,
                                                  1.21645100e17],
              [-1.04282367, -1.29353888e-01, -10.4780425, -5.77215665e-01, 16.1549704, 3.61349693e17]),
    "gammaln": ([-2.5, -0.5, 0.3, 1.0, 4.5, 20.0], [-0.05624372, 1.26551212, 1.09579799, 0.0, 2.45373657,
                                                    39.33988419],
                [1.10315672, 0.03648997, -3.50252410, -0.57721566, 1.38887101, 2.97052399]),
}


@pytest.mark.parametrize("op", sorted(SPECIAL))
def test_special_functions_match_mxnet(op):
    x, y, dy = (np.array(v, np.float64) for v in SPECIAL[op])
    np.testing.assert_allclose(forward(op, {}, [x])[0], y, rtol=1e-7, atol=1e-8)
    g = backward(op, {}, [x], forward(op, {}, [x]), [np.ones_like(x)])[0]
    np.testing.assert_allclose(g, dy, rtol=1e-5)  # MXNet's digamma is good to ~1e-6


def test_special_functions_edges():
    with np.errstate(all="raise"):
        assert np.array_equal(forward("erfinv", {}, [np.array([1.0, -1, 1.5])])[0], [np.inf, -np.inf, np.nan],
                              equal_nan=True)
        assert np.array_equal(forward("gamma", {}, [np.array([0.0, -1, -2])])[0], [np.inf, np.nan, np.nan],
                              equal_nan=True)
        np.testing.assert_array_equal(forward("gammaln", {}, [np.array([0.0, -1])])[0], [np.inf, np.inf])
    assert forward("erf", {}, [np.array([0.5], np.float32)])[0].dtype == np.float32


def test_cast_gradient_passes_back_in_the_input_dtype():
    x = np.array([1.5, 2.5], np.float32)
    (y,) = forward("Cast", dict(dtype="int32"), [x])
    np.testing.assert_array_equal(y, [1, 2])
    g = backward("Cast", dict(dtype="int32"), [x], [y], [np.array([1, 2], np.int32)])[0]
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [1, 2])


def test_creation_and_attribute_ops():
    np.testing.assert_allclose(forward("_arange", dict(start=1, stop=2, step=0.3), [])[0], [1, 1.3, 1.6, 1.9],
                               rtol=1e-6)
    np.testing.assert_array_equal(forward("_arange", dict(start=2, stop=7, step=2, repeat=2), [])[0],
                                  [2, 2, 4, 4, 6, 6])
    assert mx.sym._internal._zeros(shape=(2, 3)).list_arguments() == []
    x = np.zeros((3, 2, 4), np.float32)
    np.testing.assert_array_equal(forward("shape_array", {}, [x])[0], [3, 2, 4])
    assert forward("size_array", {}, [x])[0].dtype == np.int64
    s = mx.sym._internal._identity_with_attr_like_rhs(mx.sym.Variable("a"), mx.sym.Variable("b"))
    assert s.infer_shape(b=(2, 3))[0] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(forward("diag", dict(k=-1), [np.arange(12.0).reshape(3, 4)])[0], [4, 9])
    np.testing.assert_array_equal(forward("diag", dict(k=1, axis1=1, axis2=2), [np.arange(24.0).reshape(2, 3, 4)])[0],
                                  [[1, 6, 11], [13, 18, 23]])
