"""mx.sym.random (scalar and Symbol parameters, *_like, shuffle, randint, multinomial), mx.nd.random.*_like,
the seed making symbolic draws repeat, Symbol.eval and mx.sym.contrib.rand_zipfian."""

import numpy as np
import pytest

import mxasync as mx


def _run(sym, **arrays):
    return sym.bind(mx.cpu(), arrays, grad_req="null").forward()[0].asnumpy()


def test_scalar_params_shape_dtype_and_seed():
    s = mx.sym.random.uniform(low=-1.5, high=3.0, shape=(50, 4), dtype="float16")
    mx.random.seed(7)
    a = _run(s)
    mx.random.seed(7)
    b = _run(s)
    assert a.dtype == np.float16 and a.shape == (50, 4) and (a >= -1.5).all() and (a < 3.0).all()
    np.testing.assert_array_equal(a, b)
    mx.random.seed(7)
    np.testing.assert_array_equal(mx.nd.random.uniform(-1.5, 3.0, shape=(50, 4), dtype="float16").asnumpy(), a)
    assert _run(mx.sym.random.randn(2, 3)).shape == (2, 3)
    r = _run(mx.sym.random.randint(2, 5, shape=(100,)))
    assert r.dtype == np.int32 and r.min() >= 2 and r.max() < 5


def test_symbol_params_draw_per_element():
    s = mx.sym.random.normal(mx.sym.Variable("mu"), mx.sym.Variable("sigma"), shape=2000)
    out = _run(s, mu=mx.nd.array([0.0, 10.0]), sigma=mx.nd.array([1.0, 0.1]))
    assert out.shape == (2, 2000)
    np.testing.assert_allclose(out.mean(axis=1), [0.0, 10.0], atol=0.1)
    with pytest.raises(mx.MXNetError):
        mx.sym.random.normal(mx.sym.Variable("mu"), 1.0)


@pytest.mark.parametrize("dist,kwargs,mean", [
    ("uniform", dict(low=1, high=3), 2.0), ("normal", dict(loc=1, scale=0.1), 1.0), ("exponential", dict(lam=2), 0.5),
    ("gamma", dict(alpha=2, beta=1), 2.0), ("poisson", dict(lam=3), 3.0), ("negative_binomial", dict(k=2, p=0.5), 2.0),
    ("generalized_negative_binomial", dict(mu=2, alpha=0.3), 2.0),
])
def test_like_samplers(dist, kwargs, mean):
    data = mx.nd.zeros((3000,), dtype="float64")
    nd_out = getattr(mx.nd.random, f"{dist}_like")(data, **kwargs)
    sym_out = _run(getattr(mx.sym.random, f"{dist}_like")(mx.sym.Variable("d"), **kwargs), d=data)
    for o in (nd_out.asnumpy(), sym_out):
        assert o.shape == (3000,) and o.dtype == np.float64
        assert abs(o.mean() - mean) < 0.2


def test_shuffle_and_multinomial_symbols():
    out = _run(mx.sym.random.shuffle(mx.sym.Variable("d")), d=mx.nd.arange(10).reshape((5, 2)))
    assert sorted(out[:, 0].tolist()) == [0, 2, 4, 6, 8] and (out[:, 1] == out[:, 0] + 1).all()
    m = _run(mx.sym.random.multinomial(mx.sym.Variable("p"), shape=50), p=mx.nd.array([[0, 1.0, 0]]))
    assert m.shape == (1, 50) and (m == 1).all()


def test_eval_and_rand_zipfian():
    a = mx.sym.Variable("a")
    assert (a * 2).eval(ctx=mx.cpu(), a=mx.nd.ones((2,)), unused=mx.nd.ones((1,)))[0].asnumpy().tolist() == [2, 2]
    t = mx.sym.var("t")
    sampled, exp_true, exp_sampled = mx.sym.contrib.rand_zipfian(t, 20, 10)
    s = sampled.eval(t=mx.nd.array([1, 2]))[0].asnumpy()
    assert s.shape == (20,) and s.min() >= 0 and s.max() < 10
    np.testing.assert_allclose(exp_true.eval(t=mx.nd.array([1, 2]))[0].asnumpy(),
                               np.log(np.array([3, 4]) / np.array([2, 3])) / np.log(11) * 20)


def test_sample_unique_zipfian_trials_and_frequencies():
    mx.random.seed(1)
    samples, tries = mx.nd._internal._sample_unique_zipfian(1000, shape=(2, 100))
    s, t = samples.asnumpy(), tries.asnumpy()
    assert all(np.unique(row).size == 100 for row in s) and (t >= 100).all()
    # small classes are the likeliest: almost always drawn
    assert all({0, 1, 2} <= set(row.tolist()) for row in s)
    with pytest.raises(mx.MXNetError):
        mx.nd._internal._sample_unique_zipfian(5, shape=(1, 6))


def test_sampler_without_shape_takes_it_from_the_graph():
    # MXNet 1.x: shape () is unknown; a consumer gives it, and Symbol inputs given to a sampler are dropped
    x = mx.sym.Variable("x")
    for s in (mx.sym.random.normal(loc=1.0, scale=0.5), mx.sym.random.randn(data=mx.sym.ones((3, 4)), loc=1.0),
              mx.sym.random.gamma(alpha=2.0, beta=1.0)):
        assert s.infer_shape() == (None, None, None)
        y = s + x
        assert y.infer_shape(x=(300, 4))[1] == [(300, 4)]
        out = y.bind(mx.cpu(), {"x": mx.nd.zeros((300, 4))}).forward()[0].asnumpy()
        assert out.shape == (300, 4) and abs(out.mean() - (2.0 if "gamma" in s.name else 1.0)) < 0.3
    with pytest.raises(mx.MXNetError, match="_random_uniform: cannot infer the output shape"):
        mx.nd.random_uniform()


def test_exponential_front_ends_take_the_scale():
    # MXNet 1.9's mx.nd/sym.random.exponential(scale) pass lam = 1 / scale to the op (the mean is scale)
    assert abs(mx.nd.random.exponential(scale=4.0, shape=(4000,)).asnumpy().mean() - 4.0) < 0.4
    assert abs(mx.nd.random.exponential(0.25, (4000,)).asnumpy().mean() - 0.25) < 0.03
    per = mx.nd.random.exponential(mx.nd.array([1.0, 3.0]), shape=(4000,)).asnumpy().mean(axis=1)
    np.testing.assert_allclose(per, [1.0, 3.0], rtol=0.1)
    assert abs(_run(mx.sym.random.exponential(scale=0.5, shape=(4000,))).mean() - 0.5) < 0.05
    s = mx.sym.random.exponential(mx.sym.Variable("scale"), shape=(4000,))
    np.testing.assert_allclose(_run(s, scale=mx.nd.array([2.0, 0.5])).mean(axis=1), [2.0, 0.5], rtol=0.1)
    assert abs(mx.nd.random.exponential(lam=4.0, shape=(4000,)).asnumpy().mean() - 0.25) < 0.03  # the op's name
