"""Small array helpers of MXNet's test_utils: memory sharing, tolerances, test matrices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .compare import _to_numpy, assert_almost_equal, get_etol, get_tols, same
from .sampling import default_dtype


def same_array(array1: Any, array2: Any) -> bool:
    """Whether two NDArrays share memory: a change through one shows through the other.

    >>> import mxasync as mx
    >>> a = mx.nd.zeros((2,)); same_array(a, a[:]), same_array(a, a.copy())
    (True, False)
    """
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype that sets comparison tolerances for ``dat`` (its own: mxasync has no TF32)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat: Any, tol: Any, default_tol: Any) -> float:
    """``tol`` itself, or its entry for ``dat``'s dtype when a dict, else ``default_tol``'s."""
    if isinstance(tol, (int, float)):
        return tol
    dtype = effective_dtype(dat)
    if isinstance(tol, dict) and dtype in tol:
        return tol[dtype]
    return default_tol[dtype] if isinstance(default_tol, dict) else default_tol


def random_uniform_arrays(*shapes: tuple[int, ...], low: float = 0.0, high: float = 1.0,
                          dtype: Any = None) -> list[np.ndarray]:
    """Uniform numpy arrays in ``[low, high)``, one per shape (always a list).

    >>> [a.shape for a in random_uniform_arrays((2,), (1, 3))]
    [(2,), (1, 3)]
    """
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def collapse_sum_like(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` added or stretched.

    >>> collapse_sum_like(np.ones((2, 3)), (1, 3))
    array([[2., 2., 2.]])
    """
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise ValueError(f"collapse_sum_like: {a.shape} has fewer axes than {shape}")
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[lead + i]:
            if s != 1:
                raise ValueError(f"collapse_sum_like: {shape} does not broadcast to {a.shape}")
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def create_vector(size: int, dtype: Any = np.int64):
    """The NDArray ``arange(size)`` of ``dtype`` (for large-index tests)."""
    from .. import ndarray as nd

    return nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64):
    """A ``(rows, columns)`` NDArray whose row ``i`` is filled with ``i``."""
    from .. import ndarray as nd

    data = np.repeat(np.arange(rows).reshape(rows, 1), columns, axis=1).astype(dtype)
    return nd.array(data, dtype=dtype)


def get_identity_mat(size: int) -> np.ndarray:
    """The ``size x size`` float32 identity matrix."""
    return np.eye(size, dtype=np.float32)


def get_identity_mat_batch(size: int):
    """A batch of two identity matrices, as MXNet's linalg tests use."""
    eye = get_identity_mat(size)
    return np.stack([eye, eye])


def assign_each(the_input: np.ndarray, function: Callable | None) -> np.ndarray:
    """``function`` applied to every element of ``the_input`` (or a copy without one)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float32] if the_input.dtype == np.float32 else None)(the_input)


def assign_each2(input1: np.ndarray, input2: np.ndarray, function: Callable | None) -> np.ndarray:
    """``function`` applied to every pair of elements of two same-shaped arrays."""
    if input1.shape != input2.shape:
        raise ValueError(f"assign_each2: shapes differ: {input1.shape} vs {input2.shape}")
    if function is None:
        return np.array(input1)
    return np.vectorize(function)(input1, input2).astype(input1.dtype)


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[int, int]:
    """A random integer point in ``[x_low, x_high] x [y_low, y_high]``."""
    return int(np.random.randint(x_low, x_high + 1)), int(np.random.randint(y_low, y_high + 1))


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random ``n x n`` orthonormal matrix."""
    q, _ = np.linalg.qr(np.random.uniform(-1.0, 1.0, (n, n)))
    return q


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random ``n x n`` matrix with distinct real eigenvalues."""
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(np.arange(1, n + 1) * np.random.choice([-1.0, 1.0], n))
    # q's eigenvalues lie on the unit circle, so q + 2I's have modulus in [1, 3]: never singular, condition
    # number at most 3 (q + I is singular whenever q has the eigenvalue -1, a reflection)
    p = q + 2 * np.eye(n)
    return p @ d @ np.linalg.inv(p)


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric ``n x n`` matrix with distinct eigenvalues."""
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(np.arange(1, n + 1) * np.random.choice([-1.0, 1.0], n))
    return q @ d @ q.T


def new_matrix_with_real_eigvals_nd(shape: tuple[int, ...]) -> np.ndarray:
    """A batch (leading axes of ``shape``) of matrices from :func:`new_matrix_with_real_eigvals_2d`."""
    n = shape[-1]
    mats = [new_matrix_with_real_eigvals_2d(n) for _ in range(int(np.prod(shape[:-2])))]
    return np.array(mats).reshape(shape)


def new_sym_matrix_with_real_eigvals_nd(shape: tuple[int, ...]) -> np.ndarray:
    """A batch of symmetric matrices from :func:`new_sym_matrix_with_real_eigvals_2d`."""
    n = shape[-1]
    mats = [new_sym_matrix_with_real_eigvals_2d(n) for _ in range(int(np.prod(shape[:-2])))]
    return np.array(mats).reshape(shape)


def checkShapes(a: np.ndarray, b: np.ndarray) -> None:  # noqa: N802 - MXNet's name
    """Raise ``AssertionError`` unless ``a`` and ``b`` have the same shape."""
    if np.shape(a) != np.shape(b):
        raise AssertionError(f"Shape mismatch: {np.shape(a)} vs {np.shape(b)}")


def locationError(a: np.ndarray, b: np.ndarray, index: tuple, names: tuple[str, str],  # noqa: N802
                  maxError: bool = False) -> str:  # noqa: N803 - MXNet's argument name
    """The line MXNet prints for one mismatching position."""
    what = "Location of maximum error: " if maxError else "Location of error: "
    return f"{what}{index}, {names[0]}={float(a[index]):.8f}, {names[1]}={float(b[index]):.8f}"


def assert_almost_equal_with_err(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                                 etol: float | None = None, names: tuple[str, str] = ("a", "b"),
                                 equal_nan: bool = False, mismatches: tuple[int, int] = (10, 10)) -> None:
    """Like :func:`assert_almost_equal`, but tolerate a fraction ``etol`` of mismatching elements."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _to_numpy(a), _to_numpy(b)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / close.size
    if err > etol:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan, mismatches=mismatches)


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether two Symbols have the same graph: same ops, inputs and attributes, names aside."""
    import json

    def shape_of(s: Any) -> list:
        nodes = json.loads(s.tojson())["nodes"]
        return [(n["op"], [i[:2] for i in n.get("inputs", [])], n.get("attrs", n.get("param", {})))
                for n in nodes]

    return shape_of(sym1) == shape_of(sym2)
