"""Test scaffolding: environment variables for a block, silenced stderr, retries, platform probes."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..atomic import atomic_open


def _set_environ(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)


@contextlib.contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for the body of a ``with`` block, restoring them after.

    Called as ``environment(name, value)`` or ``environment({name: value, ...})``; a value
    of ``None`` unsets the variable. As in MXNet, pending engine work is waited for before
    the old values come back, since ops may read the variables while they run.

    >>> with environment("MXASYNC_DOCTEST_VAR", "1"):
    ...     os.environ["MXASYNC_DOCTEST_VAR"]
    '1'
    >>> "MXASYNC_DOCTEST_VAR" in os.environ
    False
    """
    if len(args) == 1 and isinstance(args[0], dict):
        values = dict(args[0])
    elif len(args) == 2:
        values = {args[0]: args[1]}
    else:
        raise TypeError("environment: give one dict {name: value} or two arguments name, value; "
                        f"got {len(args)} arguments")
    snapshot = {name: os.environ.get(name) for name in values}
    _set_environ(values)
    try:
        yield
    finally:
        from .. import ndarray as nd

        try:
            nd.waitall()
        finally:
            _set_environ(snapshot)


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Send what is written to the stderr file descriptor to /dev/null for the block."""
    try:
        fileno = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # stderr is not a real file (captured)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fileno)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), fileno)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fileno)
    finally:
        os.close(saved)


def retry(n: int) -> Callable[[Callable], Callable]:
    """Decorator: run a stochastic test up to ``n`` times; it fails only if every try
    raises ``AssertionError``.

    >>> calls = []
    >>> @retry(3)
    ... def flaky():
    ...     calls.append(1)
    ...     assert len(calls) == 2
    >>> flaky(); len(calls)
    2
    """
    if n <= 0:
        raise ValueError(f"retry: n must be positive, got {n}")

    def decorate(f: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> None:
            from .. import ndarray as nd

            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
                    nd.waitall()
        wrapper.__name__ = getattr(f, "__name__", "wrapper")
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorate


def random_sample(population: list, k: int) -> list:
    """``k`` distinct elements of ``population`` in random order (drawn with numpy's generator).

    >>> sorted(random_sample([1, 2, 3], 3))
    [1, 2, 3]
    """
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} outside [0, {len(population)}]")
    shuffled = list(population)
    np.random.shuffle(shuffled)
    return shuffled[:k]


def list_gpus() -> list[int]:
    """Ids of the GPUs mxasync can use (empty without a GPU backend).

    >>> isinstance(list_gpus(), list)
    True
    """
    from ..runtime.context import num_gpus

    return list(range(num_gpus()))


def is_cd_run() -> bool:
    """True inside MXNet's continuous-delivery pipeline (``CD_JOB`` set); never here otherwise."""
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run() -> bool:
    """True on 64-bit ARM machines."""
    return platform.machine() == "aarch64"


def has_tvm_ops() -> bool:
    """MXNet's TVM-compiled operators: not part of mxasync."""
    return False


def is_op_runnable() -> bool:
    """Whether TVM-backed ops can run here: always True, mxasync has no TVM ops to gate."""
    return True


def default_numeric_eps() -> dict:
    """Finite-difference step per dtype for numerical gradients (MXNet's table)."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def default_rtols() -> dict:
    """Relative tolerance per dtype (MXNet's table)."""
    from .compare import _RTOLS

    return {**_RTOLS, np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0, np.dtype(np.uint64): 0}


def default_atols() -> dict:
    """Absolute tolerance per dtype (MXNet's table)."""
    from .compare import _ATOLS

    return {**_ATOLS, np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0, np.dtype(np.uint64): 0}


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """Path of the ``im2rec`` tool script (``mxasync.tools.im2rec``)."""
    from ..tools import im2rec

    return os.path.abspath(im2rec.__file__)


def download(url: str, fname: str | None = None, dirname: str | None = None, overwrite: bool = False,
             retries: int = 5) -> str:
    """Download ``url`` to ``dirname/fname`` (default: the URL's last part in the current folder),
    retrying up to ``retries`` times; returns the path. The file is written atomically."""
    import urllib.request

    if retries <= 0:
        raise ValueError(f"download: retries must be positive, got {retries}")
    fname = fname or url.split("/")[-1]
    if dirname is not None:
        os.makedirs(dirname, exist_ok=True)
        fname = os.path.join(dirname, fname)
    if os.path.exists(fname) and not overwrite:
        return fname
    last: Exception | None = None
    for _ in range(retries):
        try:
            with urllib.request.urlopen(url, timeout=30) as r, atomic_open(fname, "wb") as f:
                f.write(r.read())
            return fname
        except Exception as e:  # noqa: BLE001 - any failure is retried, the last one raised
            last = e
    raise RuntimeError(f"download: {url} failed after {retries} tries: {last}") from last
