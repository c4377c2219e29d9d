"""``mx.np.random`` samplers refuse keywords they do not take (MXNet 1.9.1's test_exc_handling)."""

import pytest

import mxasync as mx


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "choice", "exponential"])
def test_np_random_refuses_unknown_keywords(name):
    op = getattr(mx.np.random, name)
    with pytest.raises(TypeError):
        op(shape=())
    with pytest.raises(TypeError):
        op(shape=None)
    assert mx.np.random.uniform(0, 1, size=(2,)).shape == (2,)
