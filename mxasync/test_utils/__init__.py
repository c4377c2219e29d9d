"""``mx.test_utils``: MXNet 1.9's helpers for users' own test suites.

Comparison with dtype-aware tolerances, random shapes and arrays, and the symbolic
checks (forward, backward and finite-difference gradients) that MXNet's operator
tests are built on.
"""

from .compare import (
    almost_equal,
    almost_equal_ignore_nan,
    assert_allclose,
    assert_almost_equal,
    assert_almost_equal_ignore_nan,
    assert_exception,
    get_atol,
    get_etol,
    get_rtol,
    get_tols,
    same,
)
from .sampling import (
    default_context,
    default_dtype,
    np_reduce,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_3d,
    rand_shape_nd,
    random_arrays,
    set_default_context,
)
from .symbolic import (
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    numeric_grad,
    simple_forward,
)

__all__ = [
    "almost_equal", "almost_equal_ignore_nan", "assert_allclose", "assert_almost_equal",
    "assert_almost_equal_ignore_nan", "assert_exception", "get_atol", "get_etol", "get_rtol", "get_tols", "same",
    "default_context", "default_dtype", "np_reduce", "rand_ndarray", "rand_shape_2d", "rand_shape_3d",
    "rand_shape_nd", "random_arrays", "set_default_context", "check_numeric_gradient", "check_symbolic_backward",
    "check_symbolic_forward", "numeric_grad", "simple_forward",
]
