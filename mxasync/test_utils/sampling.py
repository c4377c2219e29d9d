"""Default context and dtype, random shapes and arrays, numpy reductions over axes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import context as _context


def default_context() -> _context.Context:
    """The context tests run on: the current context (``cpu(0)`` unless set).

    >>> default_context()
    cpu(0)
    """
    return _context.current_context()


def set_default_context(ctx: _context.Context) -> None:
    """Make ``ctx`` the current context of this thread (or task) from now on.

    >>> import mxasync as mx
    >>> set_default_context(mx.cpu(0)); default_context()
    cpu(0)
    """
    _context._CURRENT.set(ctx)


def default_dtype() -> type:
    """The dtype of the arrays the helpers make: ``np.float32``.

    >>> default_dtype()
    <class 'numpy.float32'>
    """
    return np.float32


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random shape of ``num_dim`` sizes, each in ``[1, dim]`` (``[0, dim]`` with zero sizes).

    >>> s = rand_shape_nd(4, 3); len(s), all(1 <= d <= 3 for d in s)
    (4, True)
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, np.asarray(dim) + 1, size=num_dim))


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-d shape with sizes up to ``dim0`` and ``dim1``.

    >>> rand_shape_2d(1, 1)
    (1, 1)
    """
    return rand_shape_nd(2, (dim0, dim1), allow_zero_size)  # type: ignore[arg-type, return-value]


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple[int, int, int]:
    """A random 3-d shape with sizes up to ``dim0``, ``dim1`` and ``dim2``.

    >>> rand_shape_3d(1, 1, 1)
    (1, 1, 1)
    """
    return rand_shape_nd(3, (dim0, dim1, dim2), allow_zero_size)  # type: ignore[arg-type, return-value]


def random_arrays(*shapes: tuple[int, ...]) -> np.ndarray | list[np.ndarray]:
    """Standard-normal ``float32`` numpy arrays, one per shape; one shape gives the array itself.

    >>> random_arrays((2, 3)).shape, [a.shape for a in random_arrays((2,), (3,))]
    ((2, 3), [(2,), (3,)])
    """
    arrays = [np.array(np.random.randn(*s), dtype=default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_ndarray(shape: tuple[int, ...], stype: str = "default", density: float | None = None,
                 dtype: Any = None, modifier_func: Callable | None = None, shuffle_csr_indices: bool = False,
                 distribution: str | None = None, ctx: _context.Context | None = None):
    """A standard-normal NDArray of ``shape`` (``float32`` unless ``dtype``) on ``ctx``; with
    ``stype`` 'csr' or 'row_sparse' a random sparse one (:func:`~.sparse.rand_sparse_ndarray`;
    ``density``, ``modifier_func``, ``shuffle_csr_indices`` and ``distribution`` apply there).

    >>> x = rand_ndarray((2, 3), dtype="float64"); x.shape, x.dtype
    ((2, 3), <class 'numpy.float64'>)
    """
    if stype != "default":
        from .sparse import rand_sparse_ndarray

        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype, modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices, distribution=distribution, ctx=ctx)[0]
    from .. import ndarray as nd

    ctx = ctx if ctx is not None else default_context()
    dtype = default_dtype() if dtype is None else dtype
    return nd.array(random_arrays(tuple(shape)), ctx=ctx, dtype=dtype)


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Callable) -> np.ndarray:
    """Reduce ``dat`` over ``axis`` (None: all; an int; a list or tuple) one axis at a time.

    >>> np_reduce(np.arange(6.0).reshape(2, 3), 1, False, np.sum)
    array([ 3., 12.])
    >>> np_reduce(np.arange(6.0).reshape(2, 3), None, True, np.max)
    array([[5.]])
    """
    ndim = np.ndim(dat)
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, (int, np.integer)):
        axes = (int(axis),)
    else:
        axes = tuple(int(a) for a in axis)
    axes = tuple(sorted({a % ndim if ndim else a for a in axes}, reverse=True))
    ret = dat
    for a in axes:
        ret = numpy_reduce_func(ret, axis=a)
    if keepdims:
        shape = list(np.shape(dat))
        for a in axes:
            shape[a] = 1
        ret = np.reshape(ret, shape)
    return ret
