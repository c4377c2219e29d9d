"""Comparing arrays: MXNet's dtype-aware tolerances and assertion messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# MXNet 1.9's defaults per dtype; integer and boolean arrays must match exactly.
_RTOLS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOLS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}


def _to_numpy(x: Any) -> np.ndarray:
    """An NDArray (read back), a numpy array, a scalar or a list, as a numpy array."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def _default_tol(table: dict, dtype: Any) -> float:
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        return 0
    return table.get(dt, table[np.dtype(np.float64)])


def get_atol(atol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    """The absolute tolerance: ``atol`` when given, else the default for ``dtype``.

    >>> get_atol(), get_atol(dtype=np.float32), get_atol(0.5)
    (1e-20, 0.001, 0.5)
    """
    return _default_tol(_ATOLS, dtype) if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.dtype(np.float64)) -> float:
    """The relative tolerance: ``rtol`` when given, else the default for ``dtype``.

    >>> get_rtol(), get_rtol(dtype=np.float16), get_rtol(dtype=np.int32)
    (1e-05, 0.01, 0)
    """
    return _default_tol(_RTOLS, dtype) if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    """The tolerated fraction of mismatching elements (0 unless given).

    >>> get_etol(), get_etol(0.1)
    (0, 0.1)
    """
    return 0 if etol is None else etol


def get_tols(x: Any, y: Any, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing ``x`` with ``y``: the looser default of the two dtypes.

    >>> get_tols(np.ones(2, np.float32), np.ones(2), None, None)
    (0.0001, 0.001)
    """
    dx, dy = _to_numpy(x).dtype, _to_numpy(y).dtype
    if rtol is None:
        rtol = max(get_rtol(None, dx), get_rtol(None, dy))
    if atol is None:
        atol = max(get_atol(None, dx), get_atol(None, dy))
    return rtol, atol


def _check_shapes(a: np.ndarray, b: np.ndarray, names: tuple[str, str], use_broadcast: bool) -> None:
    if a.shape == b.shape:
        return
    if use_broadcast:
        try:
            np.broadcast_shapes(a.shape, b.shape)
            return
        except ValueError:
            why = "cannot be broadcast together"
    else:
        why = "are not equal (use_broadcast=False)"
    raise AssertionError(
        f"\nItems are not equal: {names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} {why}\n"
        f" ACTUAL: {a!r}\n DESIRED: {b!r}")


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, use_broadcast: bool = True) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere.

    As in MXNet, the defaults are float64's (rtol 1e-5, atol 1e-20) whatever the
    dtypes; :func:`assert_almost_equal` picks them by dtype.

    >>> almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-6]))
    True
    >>> almost_equal(np.array([np.nan]), np.array([np.nan])), almost_equal([np.nan], [np.nan], equal_nan=True)
    (False, True)
    """
    a, b = _to_numpy(a), _to_numpy(b)
    _check_shapes(a, b, ("a", "b"), use_broadcast)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _errors(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """Per element ``|a - b| / (atol + rtol * |b|)``; NaN where exactly one side (or, unless
    ``equal_nan``, either side) is NaN; 0 where equal (infinities included)."""
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a64 - b64)
        tol = atol + rtol * np.abs(b64)
        err = np.where(tol > 0, diff / np.where(tol > 0, tol, 1.0), np.where(diff > 0, np.inf, 0.0))
    err = np.where(a64 == b64, 0.0, err)
    err = np.where(np.isnan(a64) | np.isnan(b64), np.nan, err)
    if equal_nan:
        err = np.where(np.isnan(a64) & np.isnan(b64), 0.0, err)
    return err


def _worst(err: np.ndarray) -> tuple[int, ...]:
    """Index of the worst error; a NaN counts as the worst."""
    flat = err.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat))
    i = int(nans[0]) if nans.size else int(np.argmax(flat))
    return tuple(int(k) for k in np.unravel_index(i, err.shape))


def assert_almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                        names: tuple[str, str] = ("a", "b"), equal_nan: bool = False,
                        use_broadcast: bool = True, mismatches: tuple[int, int] = (10, 10)) -> None:
    """Raise ``AssertionError`` unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    Tolerances default by dtype (float16 1e-2/1e-1, float32 1e-4/1e-3, float64
    1e-5/1e-20, integers exact; the looser of the two inputs). The message shows the
    worst error, its location and both values, then up to ``mismatches[0]`` more.

    >>> assert_almost_equal(np.ones(3, np.float32), np.ones(3, np.float32) + 1e-4)
    >>> assert_almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.5]), names=("x", "y"))
    Traceback (most recent call last):
    ...
    AssertionError: ...
    Items are not equal:
    Error 20000.000000 exceeds tolerance rtol=1.000000e-05, atol=1.000000e-20 (mismatch 50.000000%).
    Location of maximum error: (1,), x=2.00000000, y=2.50000000
    ...
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _to_numpy(a), _to_numpy(b)
    _check_shapes(a, b, names, use_broadcast)
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    err = _errors(a, b, rtol, atol, equal_nan)
    bad = ~(err <= 1)  # NaN errors count as mismatches
    ab, bb = np.broadcast_arrays(a, b)
    loc = _worst(err)

    def _at(idx: tuple[int, ...]) -> str:
        return f"{names[0]}={float(ab[idx]):.8f}, {names[1]}={float(bb[idx]):.8f}"

    msg = (f"\nItems are not equal:\nError {float(err[loc]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
           f"(mismatch {100.0 * bad.sum() / max(bad.size, 1):f}%).\n"
           f"Location of maximum error: {loc}, {_at(loc)}\n ACTUAL: {a!r}\n DESIRED: {b!r}")
    limit = mismatches[0] if mismatches else 0
    if bad.sum() > 1 and limit > 0:
        order = np.argsort(-np.nan_to_num(err.reshape(-1), nan=np.inf), kind="stable")
        order = [i for i in order if bad.reshape(-1)[i]][:limit]
        lines = []
        for rank, i in enumerate(order, 1):
            idx = tuple(int(k) for k in np.unravel_index(i, err.shape))
            lines.append(f"  {rank}: Error {float(err[idx]):f}  Location of error: {idx}, {_at(idx)}")
        msg += f"\n*** Largest errors (of {int(bad.sum())} mismatches):\n" + "\n".join(lines)
    raise AssertionError(msg)


def _mask_nan(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.array(_to_numpy(a)), np.array(_to_numpy(b))
    a, b = np.broadcast_arrays(a, b)
    a, b = a.copy(), b.copy()
    nan = np.isnan(a.astype(np.float64)) | np.isnan(b.astype(np.float64))
    a[nan] = 0
    b[nan] = 0
    return a, b


def almost_equal_ignore_nan(a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
    """:func:`almost_equal` after zeroing every position where ``a`` or ``b`` is NaN.

    >>> almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    True
    """
    return almost_equal(*_mask_nan(a, b), rtol=rtol, atol=atol)


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                                   names: tuple[str, str] = ("a", "b")) -> None:
    """:func:`assert_almost_equal` after zeroing every position where ``a`` or ``b`` is NaN.

    >>> assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    """
    a2, b2 = _mask_nan(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    assert_almost_equal(a2, b2, rtol=rtol, atol=atol, names=names)


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True) -> None:
    """numpy's ``assert_allclose`` defaults, with MXNet's message.

    >>> assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    """
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` have the same shape and exactly equal elements (NaN != NaN).

    >>> same(np.ones(3), np.ones(3, dtype=np.int32)), same(np.ones(3), np.ones(4))
    (True, False)
    """
    return bool(np.array_equal(_to_numpy(a), _to_numpy(b)))


def assert_exception(f: Callable, exception_type: type[BaseException], *args: Any, **kwargs: Any) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``.

    Another exception propagates unchanged.

    >>> assert_exception(lambda x: 1 / x, ZeroDivisionError, 0)
    >>> assert_exception(lambda x: 1 / x, ZeroDivisionError, 1)
    Traceback (most recent call last):
    ...
    AssertionError: <lambda> did not raise ZeroDivisionError
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    name = getattr(f, "__name__", repr(f))
    raise AssertionError(f"{name} did not raise {exception_type.__name__}")
