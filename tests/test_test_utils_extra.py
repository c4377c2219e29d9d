"""mx.test_utils beyond comparison: environment, retry, generator checks, compare_optimizer,
and what ``from mxasync.test_utils import *`` hands out (MXNet's test files rely on it)."""

import os

import numpy as np
import pytest

import mxasync as mx
from mxasync import test_utils as tu


def test_environment_sets_and_restores():
    os.environ.pop("MXASYNC_T_A", None)
    os.environ["MXASYNC_T_B"] = "old"
    try:
        with tu.environment({"MXASYNC_T_A": "1", "MXASYNC_T_B": None}):
            assert os.environ["MXASYNC_T_A"] == "1" and "MXASYNC_T_B" not in os.environ
        assert "MXASYNC_T_A" not in os.environ and os.environ["MXASYNC_T_B"] == "old"
        with pytest.raises(KeyError), tu.environment("MXASYNC_T_A", "2"):
            assert os.environ["MXASYNC_T_A"] == "2"
            raise KeyError("body fails")
        assert "MXASYNC_T_A" not in os.environ
    finally:
        os.environ.pop("MXASYNC_T_B", None)
    with pytest.raises(TypeError):
        with tu.environment("A", "1", "extra"):
            pass


def test_retry_reraises_the_last_failure():
    calls = []

    @tu.retry(3)
    def always():
        calls.append(1)
        raise AssertionError("no")

    with pytest.raises(AssertionError):
        always()
    assert len(calls) == 3


def test_random_sample_and_discard_stderr():
    s = tu.random_sample(list(range(10)), 4)
    assert len(set(s)) == 4 and set(s) <= set(range(10))
    with pytest.raises(ValueError):
        tu.random_sample([1], 2)
    with tu.discard_stderr():
        pass


def test_verify_generator_accepts_right_and_rejects_wrong_distribution():
    pytest.importorskip("scipy")
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)
    rng = np.random.RandomState(3)
    tu.verify_generator(lambda n: rng.uniform(size=n), buckets, probs, nsamples=5000, nrepeat=3)
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: rng.uniform(size=n) ** 2, buckets, probs, nsamples=5000, nrepeat=3)
    # discrete buckets: the values themselves
    p, obs, exp = tu.chi_square_check(lambda n: rng.randint(0, 2, size=n), [0, 1], [0.5, 0.5], 2000)
    assert obs.sum() == 2000 and list(exp) == [1000, 1000] and p > 1e-3
    assert tu.mean_check(lambda n: rng.normal(size=n), 0, 1, 10000)
    assert not tu.mean_check(lambda n: rng.normal(size=n) + 1, 0, 1, 10000)


def test_compare_optimizer_detects_a_difference():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.1), (3, 4),
                         np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2), (3, 4),
                             np.float32)


def test_same_array_and_small_helpers():
    a = mx.nd.zeros((3,))
    assert tu.same_array(a, a[:]) and not tu.same_array(a, a.copy())
    assert (a.asnumpy() == 0).all()
    np.testing.assert_array_equal(tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)), np.full((3, 1), 8.0))
    assert tu.create_2d_tensor(3, 2).asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]]
    m = tu.new_sym_matrix_with_real_eigvals_2d(4)
    np.testing.assert_allclose(m, m.T, atol=1e-12)


def test_star_import_gives_what_mxnet_test_files_use():
    ns = {}
    exec("from mxasync.test_utils import *", ns)
    for name in ("mx", "np", "sys", "os", "environment", "verify_generator", "assert_almost_equal",
                 "rand_ndarray", "default_context", "same", "retry", "compare_optimizer", "Symbol", "array"):
        assert name in ns, name
    assert ns["mx"] is mx


def test_base_and_util_helpers():
    assert mx.base.py_str(b"abc") == "abc" and mx.base.c_str("x") == b"x"
    assert isinstance(np.int64(1), mx.base.integer_types) and mx.base.mx_real_t is np.float32
    assert issubclass(mx.base.NotImplementedForSymbol, mx.MXNetError)
    assert "namely operator" in str(mx.base.NotImplementedForSymbol(len, "len"))
    assert not mx.util.is_np_shape() and mx.util.set_np_shape(False) is False
    with mx.np_shape(False):
        pass
    with mx.np_shape(True):
        assert mx.util.is_np_shape()
    assert not mx.util.is_np_shape()
    with mx.attribute.AttrScope(group="a"):
        assert mx.sym.Variable("v").attr("__group__") == "a"
    with mx.name.NameManager():
        pass


def test_mx_random_is_nd_random():
    mx.random.seed(5)
    a = mx.random.uniform(-1, 1, shape=(4,), ctx=mx.cpu()).asnumpy()
    mx.random.seed(5)
    b = mx.nd.random.uniform(-1, 1, shape=(4,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    out = mx.nd.zeros((2, 2))
    mx.random.normal(0, 1, out=out)
    assert out.shape == (2, 2) and mx.random.poisson(lam=2.0, shape=(3,)).shape == (3,)
