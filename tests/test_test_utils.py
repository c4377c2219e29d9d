"""mx.test_utils: each helper on passing and failing inputs (semantics read off MXNet 1.9.1)."""

import numpy as np
import pytest

import mxasync as mx
from mxasync import test_utils as tu


def test_context_and_dtype():
    assert tu.default_context() == mx.cpu(0)
    tu.set_default_context(mx.cpu(0))
    assert tu.default_context() == mx.current_context()
    assert tu.default_dtype() is np.float32


@pytest.mark.parametrize("dtype, rtol, atol", [
    (np.float16, 1e-2, 1e-1), (np.float32, 1e-4, 1e-3), (np.float64, 1e-5, 1e-20),
    (np.int32, 0, 0), (np.uint8, 0, 0), (np.bool_, 0, 0),
])
def test_tolerances(dtype, rtol, atol):
    assert tu.get_rtol(None, np.dtype(dtype)) == rtol and tu.get_atol(None, np.dtype(dtype)) == atol
    assert tu.get_rtol(0.3, dtype) == 0.3 and tu.get_atol(0.7, dtype) == 0.7
    assert tu.get_etol() == 0 and tu.get_etol(0.2) == 0.2


def test_get_tols_takes_the_looser_dtype():
    f16, f32 = np.ones(1, np.float16), np.ones(1, np.float32)
    assert tu.get_tols(f32, f16, None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.ones(1, np.int32), np.ones(1, np.int32), None, None) == (0, 0)
    assert tu.get_tols(mx.nd.ones(1), np.ones(1), 0.5, None) == (0.5, 1e-3)


def test_almost_equal():
    a = np.ones(3)
    assert tu.almost_equal(a, a + 1e-6)
    assert not tu.almost_equal(a, a + 1e-4)            # float64 defaults whatever the dtype (as MXNet)
    assert tu.almost_equal(a, a + 1e-4, rtol=1e-3)
    assert tu.almost_equal(np.ones((1, 3)), np.ones((2, 3)))
    with pytest.raises(AssertionError, match="are not equal"):
        tu.almost_equal(np.ones((1, 3)), np.ones((2, 3)), use_broadcast=False)
    assert not tu.almost_equal(np.array([np.nan]), np.array([np.nan]))
    assert tu.almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    assert tu.almost_equal(mx.nd.ones(3), np.ones(3))
    assert tu.almost_equal(np.array([np.inf]), np.array([np.inf]))


def test_assert_almost_equal_passes_with_dtype_tolerances():
    a = np.ones(3, np.float32)
    tu.assert_almost_equal(a, a + np.float32(1e-4))
    tu.assert_almost_equal(mx.nd.array(a), a)
    tu.assert_almost_equal(np.ones((1, 3)), np.ones((2, 3)))
    tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)


def test_assert_almost_equal_message_shows_worst_element():
    a = np.arange(6.0).reshape(2, 3)
    b = a + np.array([[0, 0, 0.1], [0, 0.5, 0]])
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, names=("x", "y"))
    msg = str(info.value)
    assert "Error 11111.111111 exceeds tolerance rtol=1.000000e-05, atol=1.000000e-20 (mismatch 33.333333%)" in msg
    assert "Location of maximum error: (1, 1), x=4.00000000, y=4.50000000" in msg
    assert "(0, 2), x=2.00000000, y=2.10000000" in msg          # the next-worst mismatch is listed too
    assert " ACTUAL: " in msg and " DESIRED: " in msg


def test_assert_almost_equal_failures():
    with pytest.raises(AssertionError, match="Error nan"):
        tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match="use_broadcast=False"):
        tu.assert_almost_equal(np.ones(3), np.ones((2, 3)), use_broadcast=False)
    with pytest.raises(AssertionError, match="cannot be broadcast"):
        tu.assert_almost_equal(np.ones(3), np.ones(4))
    with pytest.raises(AssertionError, match="rtol=0.000000e"):
        tu.assert_almost_equal(np.array([1, 2]), np.array([1, 3]))          # integers: exact
    with pytest.raises(AssertionError, match="Location of maximum error: \\(\\)"):
        tu.assert_almost_equal(np.float32(1), np.float32(2))


def test_ignore_nan_and_allclose():
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([2.0, 1.0]))
    assert tu.almost_equal_ignore_nan(np.array([1.0, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match=r"Location of maximum error: \(1,\), p=1"):
        tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([2.0, 2.0]), names=("p", "q"))
    assert not tu.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([2.0, 2.0]))
    tu.assert_allclose(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError):
        tu.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]))


def test_same_and_assert_exception():
    assert tu.same(np.ones(3), np.ones(3, np.int32)) and tu.same(mx.nd.ones(3), np.ones(3))
    assert not tu.same(np.ones(3), np.ones(4))
    assert not tu.same(np.array([np.nan]), np.array([np.nan]))
    tu.assert_exception(lambda x: 1 / x, ZeroDivisionError, 0)
    with pytest.raises(AssertionError, match="did not raise ZeroDivisionError"):
        tu.assert_exception(lambda x: 1 / x, ZeroDivisionError, 1)
    with pytest.raises(ZeroDivisionError):
        tu.assert_exception(lambda x: 1 / x, ValueError, 0)


def test_random_shapes_and_arrays():
    for _ in range(20):
        s2, s3, sn = tu.rand_shape_2d(3, 4), tu.rand_shape_3d(2, 2, 2), tu.rand_shape_nd(4, 5)
        assert len(s2) == 2 and 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4
        assert len(s3) == 3 and all(1 <= d <= 2 for d in s3)
        assert len(sn) == 4 and all(1 <= d <= 5 for d in sn)
        assert all(0 <= d <= 1 for d in tu.rand_shape_nd(3, 1, allow_zero_size=True))
    a = tu.random_arrays((2, 3))
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert [x.shape for x in tu.random_arrays((2,), (3,))] == [(2,), (3,)]
    assert tu.random_arrays(()).shape == () and tu.random_arrays() == []


def test_rand_ndarray():
    np.random.seed(0)
    x = tu.rand_ndarray((2, 3))
    np.random.seed(0)
    assert x.shape == (2, 3) and x.dtype == np.float32 and x.context == mx.cpu(0)
    tu.assert_almost_equal(x, np.random.randn(2, 3).astype(np.float32))
    assert tu.rand_ndarray((4,), dtype="float64").dtype == np.float64
    c = tu.rand_ndarray((4, 5), stype="csr", density=0.5)
    assert c.stype == "csr" and c.shape == (4, 5)
    c.check_format()


def test_np_reduce():
    d = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(d, 1, False, np.sum), d.sum(1))
    np.testing.assert_array_equal(tu.np_reduce(d, (0, -1), True, np.max), d.max((0, 2), keepdims=True))
    assert tu.np_reduce(d, None, False, np.sum) == d.sum()
    assert tu.np_reduce(d, None, True, np.sum).shape == (1, 1, 1)
    np.testing.assert_array_equal(tu.np_reduce(d, [], True, np.sum), d)


def test_simple_forward():
    x = mx.sym.Variable("x")
    np.testing.assert_array_equal(tu.simple_forward(2 * x, x=np.ones(2)), [2.0, 2.0])
    outs = tu.simple_forward(mx.sym.Group([2 * x, x + 1]), x=np.ones(2))
    assert isinstance(outs, list) and len(outs) == 2


def test_numeric_grad():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    exe = (x * y).simple_bind(mx.cpu(), x=(2,), y=(2,))
    loc = {"x": np.array([1.0, 2.0]), "y": np.array([3.0, 4.0])}
    g = tu.numeric_grad(exe, loc, eps=2.0 ** -9)
    tu.assert_almost_equal(g["x"], loc["y"], rtol=1e-3, atol=1e-3)
    tu.assert_almost_equal(g["y"], loc["x"], rtol=1e-3, atol=1e-3)
    tu.assert_almost_equal(exe.arg_dict["x"], loc["x"])     # the location is restored


def _fc_net():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    return mx.sym.Activation(fc, act_type="tanh")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_check_numeric_gradient_passes(dtype):
    rng = np.random.RandomState(1)
    net = _fc_net()
    loc = {"data": rng.rand(2, 4) - 0.5, "fc_weight": rng.rand(3, 4) - 0.5, "fc_bias": rng.rand(3) - 0.5}
    tu.check_numeric_gradient(net, loc, dtype=dtype, rtol=1e-2 if dtype == np.float32 else None,
                              atol=1e-3 if dtype == np.float32 else 1e-6)
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    a, b = rng.rand(3, 2) + 0.5, rng.rand(3, 2) + 0.5
    tu.check_numeric_gradient(x * y + x / y - mx.sym.exp(x), [a, b], dtype=np.float64, atol=1e-6)
    tu.check_numeric_gradient(mx.sym.sigmoid(x), [a], grad_nodes=["x"], dtype=np.float64, atol=1e-6)
    tu.check_numeric_gradient(x * y, {"x": a, "y": b}, grad_nodes={"x": "add"}, dtype=np.float64, atol=1e-6)


def test_check_numeric_gradient_catches_a_wrong_gradient():
    x = mx.sym.Variable("x")
    with pytest.raises(AssertionError, match="NUMERICAL_x=.*BACKWARD_x="):
        # BlockGrad hides one factor from backward: the declared gradient is x, the true one 2x
        tu.check_numeric_gradient(mx.sym.BlockGrad(x) * x, [np.array([1.0, 2.0, -1.5])], dtype=np.float64)


def test_check_numeric_gradient_errors():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    with pytest.raises(ValueError, match="no value for arguments \\['y'\\]"):
        tu.check_numeric_gradient(x * y, {"x": np.ones(2)})
    with pytest.raises(ValueError, match="one output"):
        tu.check_numeric_gradient(mx.sym.Group([x, y]), [np.ones(2), np.ones(2)])


def test_check_symbolic_forward_lists_and_dicts():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = x * y
    loc = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    outs = tu.check_symbolic_forward(s, loc, [np.array([3.0, 8.0])])
    assert outs[0].shape == (2,)
    tu.check_symbolic_forward(s, {"x": loc[0], "y": loc[1]}, {s.list_outputs()[0]: np.array([3.0, 8.0])})
    name = s.list_outputs()[0]
    with pytest.raises(AssertionError, match=f"EXPECTED_{name}=9.00000000, FORWARD_{name}=8.00000000"):
        tu.check_symbolic_forward(s, loc, [np.array([3.0, 9.0])])


def test_check_symbolic_backward_lists_and_dicts():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = x * y
    loc = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    g = tu.check_symbolic_backward(s, loc, [np.ones(2)], [np.array([3.0, 4.0]), np.array([1.0, 2.0])])
    tu.assert_almost_equal(g["y"], loc[0])
    tu.check_symbolic_backward(s, loc, {s.list_outputs()[0]: 2 * np.ones(2)}, {"x": np.array([6.0, 8.0])})
    tu.check_symbolic_backward(s, loc, [np.ones(2)], {"x": np.array([3.0, 4.0])}, grad_req="add")
    g = tu.check_symbolic_backward(s, loc, [np.ones(2)], {"x": np.array([3.0, 4.0])},
                                   grad_req={"x": "write", "y": "null"})
    assert "x" in g
    with pytest.raises(AssertionError, match="EXPECTED_x=5.00000000, BACKWARD_x=4.00000000"):
        tu.check_symbolic_backward(s, loc, [np.ones(2)], {"x": np.array([3.0, 5.0])})
    with pytest.raises(ValueError, match="unknown argument"):
        tu.check_symbolic_backward(s, loc, [np.ones(2)], {"z": np.ones(2)})
