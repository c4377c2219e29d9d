"""The engine's own BLAS: a private OpenBLAS instance for the numpy backend's big GEMMs.

numpy's OpenBLAS is process-wide: its thread count is the user's numpy's too, so the
engine may not change it, and two engine workers each running a multithreaded GEMM on it
at once fall off a cliff (two 128x784x512 GEMMs take 80 ms together against 1 ms alone on
2 cores: the two callers fight over one thread pool).  So the engine loads a second
OpenBLAS (the ``scipy-openblas32`` wheel, whose symbols are prefixed and so never clash
with numpy's) and owns it outright:

* its own pool stays at one thread: a big GEMM is instead cut here into two blocks of
  columns (or of the batch) per core, run by the numpy backend's kernel threads
  (:mod:`.parallel`), each block a one-thread call.  OpenBLAS's own two-thread split cost
  1.1-2x the CPU time of the blocks for the same product, up to 7x on the weight gradient's
  64x25088x576 (``benchmarks/blas_blocks.py``: ResNet-18's convolution GEMMs, 2-core Xeon):
  its threads meet at a barrier after every block of the summed axis, and stall at each on
  a core that is busy elsewhere; a block per thread shares nothing.  The cut follows the configured thread count only, so the bits never depend on
  the load; who runs the blocks does (the caller runs them all when no core is idle, as a
  BLAS call is as slow as its slowest thread: on 2 busy cores a 2-thread GEMM measured 6-20x
  slower than a 1-thread one).  ``MXASYNC_BLAS_THREADS=n`` caps the blocks; with 1 every
  call runs whole in its worker and calls run side by side;
* the pool threads OpenBLAS starts at load never spin: its default is to spin them for
  ~0.1 s after each call, which burned a whole core per step when they ran GEMMs (the
  wheel's package loads the library at import, before the timeout could be set, so it is
  found and loaded here without importing the package);
* the count is this instance's alone: the user's numpy keeps its own.

GEMMs below :data:`MIN_WORK` multiply-adds stay on numpy (OpenBLAS runs those on one
thread anyway, and a ctypes call costs ~2 µs), and below :data:`ONE_THREAD_WORK` they run
whole; so does everything on numpy when the wheel is missing, when dtypes are not
float32/float64, or when a layout cannot be passed to BLAS without a copy.

>>> import numpy as np
>>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> matmul(a, a.T).tolist()
[[5.0, 14.0], [14.0, 50.0]]
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, NamedTuple

import numpy

from ...base import env_int
from . import parallel

__all__ = ["matmul", "matmul_into_rows", "available", "threads", "MIN_WORK"]

#: GEMMs with fewer multiply-adds than this run on numpy (OpenBLAS's own single-thread line).
MIN_WORK = 1 << 18
#: GEMMs with fewer multiply-adds than this run whole on the caller's thread: handing a block to a
#: kernel thread costs 30-100 µs, more than a second core saves below ~10M (2-core Xeon: 128x64x512
#: took 63 µs on one thread, 119 µs on two; 128x256x512 took 223 µs on one, 159 µs on two).
ONE_THREAD_WORK = 12 << 20

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_INT_MAX = (1 << 31) - 1

_lib = None
_gemm: dict = {}
_gemm_batch: dict = {}
_threads = 0
_loaded = False
_load_lock = threading.Lock()
_run_lock = threading.Lock()


def _dlopen_quiet(path: str):
    """Load the library with its pool threads sleeping as soon as a GEMM ends.

    OpenBLAS's pool threads spin for ~0.1 s after each call by default; on a machine with
    other work (our other worker, the user's numpy, other processes) the spinning threads
    starve whoever has real work (a 0.75 ms GEMM measured 26 ms).  The library reads the
    timeout from the environment while it loads, so it is set for that moment only.
    """
    key = "OPENBLAS_THREAD_TIMEOUT"
    old = os.environ.get(key)
    if old is None:
        os.environ[key] = "4"  # OpenBLAS's minimum: 2**4 cycles
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    finally:
        if old is None:
            os.environ.pop(key, None)


def _library_path() -> str:
    """The wheel's shared library, found without importing the package: its ``__init__`` loads the
    library at import (RTLD_GLOBAL), before :func:`_dlopen_quiet` could set the thread timeout."""
    import importlib.util

    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("scipy_openblas32 is not installed")
    lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    names = sorted(n for n in os.listdir(lib_dir) if n.startswith("libscipy_openblas") and (".so" in n or n.endswith(".dylib")))
    if not names:
        raise ImportError(f"no libscipy_openblas shared library in {lib_dir}")
    return os.path.join(lib_dir, names[0])


def _load() -> None:
    global _lib, _threads, _loaded
    with _load_lock:
        if _loaded:
            return
        try:
            lib = _dlopen_quiet(_library_path())
            prefix = "scipy_"
            set_threads = getattr(lib, prefix + "openblas_set_num_threads")
        except (ImportError, OSError, AttributeError, IndexError):  # no private BLAS: numpy does it all
            _loaded = True
            return
        from ...runtime.engine.threads import cpu_count

        n = max(1, env_int(cpu_count(), "MXASYNC_BLAS_THREADS"))
        set_threads.argtypes = [ctypes.c_int]
        vp, ci = ctypes.c_void_p, ctypes.c_int
        for dtype, name, scalar in ((numpy.float32, "sgemm", ctypes.c_float),
                                    (numpy.float64, "dgemm", ctypes.c_double)):
            fn = getattr(lib, f"{prefix}cblas_{name}")
            fn.argtypes = [ci, ci, ci, ci, ci, ci, scalar, vp, ci, vp, ci, scalar, vp, ci]
            fn.restype = None
            _gemm[numpy.dtype(dtype)] = fn
            fb = getattr(lib, f"{prefix}cblas_{name}_batch_strided", None)
            if fb is not None:
                fb.argtypes = [ci, ci, ci, ci, ci, ci, scalar, vp, ci, ci, vp, ci, ci, scalar, vp, ci, ci, ci]
                fb.restype = None
                _gemm_batch[numpy.dtype(dtype)] = fb
        _lib, _threads, _loaded = lib, n, True
        _set_threads(1)  # blocks per thread are cut here (see the module's docstring)


def _set_threads(n: int) -> None:
    _lib.scipy_openblas_set_num_threads(n)


def available() -> bool:
    """Whether the private BLAS is loaded (it loads on first use)."""
    if not _loaded:
        _load()
    return _lib is not None


def threads() -> int:
    """Blocks a big GEMM is cut into on the private BLAS, one per thread (0 when it is not available)."""
    return _threads if available() else 0


def _operand(shape, strides, size):
    """``(transpose flag, leading dimension)`` of a matrix BLAS can read as is, else None."""
    (r, c), (s0, s1) = shape, strides
    if s1 == size and s0 >= max(1, c) * size and s0 % size == 0:
        return _NO_TRANS, s0 // size
    if s0 == size and s1 >= max(1, r) * size and s1 % size == 0:
        return _TRANS, s1 // size
    return None


def _batch_stride(shape, strides, size):
    """The one element stride that walks every batch dim in order, or None (0 for a broadcast operand)."""
    stride = None
    for n, st in zip(reversed(shape), reversed(strides), strict=True):
        if n == 1:
            continue
        if stride is None:
            stride, span = st, n
        elif st != stride * span:
            return None
        else:
            span *= n
    if stride is None:
        return 0
    return stride // size if stride % size == 0 and stride >= 0 else None


def _numpy(a, b, out):
    return numpy.matmul(a, b) if out is None else numpy.matmul(a, b, out=out)


def _big_numpy(a, b, out):
    """A big GEMM the private BLAS cannot take (no wheel, an odd layout or dtype) on numpy's BLAS,
    one at a time all the same: two multithreaded calls at once on numpy's pool are the cliff."""
    with _run_lock:
        return _numpy(a, b, out)


class _Gemm(NamedTuple):
    """One product ready for the private BLAS (the arguments of :func:`_call`) and its size."""

    fn: Any  # cblas_?gemm, or cblas_?gemm_batch_strided when ``batched``
    batched: bool
    count: int
    la: tuple
    lb: tuple
    m: int
    n: int
    k: int
    pa: int  # addresses of the first elements of a, b and c
    pb: int
    pc: int
    sa: int
    sb: int
    lc: int  # leading dimension of ``c``
    sc: int  # element stride from one of ``c``'s matrices to the next
    size: int  # bytes per element
    work: int
    out: Any  # the array ``c`` points into (what matmul returns)


def _prepare(a, b, out):
    """``a @ b`` (into ``out``) as a :class:`_Gemm`, or the numpy function that computes it instead."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or a.shape[-1] != b.shape[-2]:
        return _numpy
    (m, k), n = a.shape[-2:], b.shape[-1]
    if a.ndim == 2 and b.ndim == 2:
        batch, count = (), 1
    else:
        try:
            batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            return _numpy  # numpy raises the error
        count = 1
        for d in batch:
            count *= d
    work = count * m * n * k
    if work < MIN_WORK or max(m, n, k, count) > _INT_MAX:
        return _numpy
    if not _loaded:
        _load()
    fn = (_gemm if count == 1 else _gemm_batch).get(a.dtype)
    size = a.itemsize
    la = _operand(a.shape[-2:], a.strides[-2:], size)
    lb = _operand(b.shape[-2:], b.strides[-2:], size)
    if fn is None or la is None or lb is None:
        return _big_numpy
    shape = batch + (m, n)
    if out is None:
        c = numpy.empty(shape, dtype=a.dtype)
    elif (out.shape == shape and out.dtype == a.dtype and out.flags.c_contiguous
          and not numpy.may_share_memory(out, a) and not numpy.may_share_memory(out, b)):
        c = out
    else:
        return _big_numpy
    sa = sb = 0
    if count > 1:
        sa, sb = _stride_over(a, batch, size), _stride_over(b, batch, size)
        if sa is None or sb is None:
            return _big_numpy
    return _Gemm(fn, count > 1, count, la, lb, m, n, k, a.ctypes.data, b.ctypes.data, c.ctypes.data, sa, sb, n,
                 m * n, size, work, c)


#: Column (or row) blocks are cut at multiples of this: the width the GEMM kernels step by.
_BLOCK = 16


def _run(g: _Gemm, beta: float = 0.0) -> None:
    """Run ``g``, cut into two blocks a thread when big (see the module's docstring): when a kernel thread
    is slow to start its block (a busy machine), the caller takes the blocks nobody has yet."""
    if g.work < ONE_THREAD_WORK or _threads <= 1:
        _call(g, beta)
        return
    parts = 2 * _threads
    if g.count > 1:
        parallel.split(lambda lo, hi: _call(_batch_block(g, lo, hi), beta), g.count, parts=parts)
    elif g.n >= g.m:
        parallel.split(lambda lo, hi: _call(_column_block(g, lo * _BLOCK, min(g.n, hi * _BLOCK)), beta),
                       -(-g.n // _BLOCK), parts=parts)
    else:
        parallel.split(lambda lo, hi: _call(_row_block(g, lo * _BLOCK, min(g.m, hi * _BLOCK)), beta),
                       -(-g.m // _BLOCK), parts=parts)


def _batch_block(g: _Gemm, lo: int, hi: int) -> _Gemm:
    z = g.size
    return g._replace(count=hi - lo, pa=g.pa + lo * g.sa * z, pb=g.pb + lo * g.sb * z, pc=g.pc + lo * g.sc * z)


def _column_block(g: _Gemm, lo: int, hi: int) -> _Gemm:
    """Columns ``lo:hi`` of ``c``: the same columns of ``b`` (rows of ``b``'s storage when transposed)."""
    z = g.size
    pb = g.pb + (lo if g.lb[0] == _NO_TRANS else lo * g.lb[1]) * z
    return g._replace(n=hi - lo, pb=pb, pc=g.pc + lo * z)


def _row_block(g: _Gemm, lo: int, hi: int) -> _Gemm:
    """Rows ``lo:hi`` of ``c``: the same rows of ``a`` (columns of ``a``'s storage when transposed)."""
    z = g.size
    pa = g.pa + (lo * g.la[1] if g.la[0] == _NO_TRANS else lo) * z
    return g._replace(m=hi - lo, pa=pa, pc=g.pc + lo * g.lc * z)


def _numpy_into(a, b, c, accumulate: bool) -> None:
    """``c = a @ b`` (``+=`` when ``accumulate``) on numpy, where the private BLAS cannot take it."""
    if accumulate:
        c += numpy.matmul(a, b)
    else:
        numpy.matmul(a, b, out=c)


def matmul(a, b, out=None, accumulate: bool = False):
    """``numpy.matmul(a, b, out=out)``, with big float GEMMs (batched too) on the engine's private BLAS.

    ``accumulate``: ``out += a @ b`` (BLAS's beta = 1).  A layer's bias written into ``out``
    first and accumulated onto costs ~15 µs where adding it after a two-thread GEMM costs
    ~50 µs: half the product then sits in the other core's cache (128x512x512 on 2 cores).
    """
    if accumulate and out is None:
        raise ValueError("matmul: accumulate needs out")
    g = _prepare(a, b, out)
    if not isinstance(g, _Gemm):
        if accumulate:
            _numpy_into(a, b, out, True)
            return out
        return g(a, b, out)
    _run(g, beta=1.0 if accumulate else 0.0)
    return g.out


def matmul_into_rows(a, b, c, accumulate: bool = False) -> None:
    """``c[i] = a @ b[i]`` (``+=`` when ``accumulate``) for ``a`` ``(M, K)``, ``b`` ``(B, K, N)`` and ``c``
    ``(B, M, N)``, where ``b`` and ``c`` may be strided views whose rows are contiguous runs
    (a row stride longer than the row: windows of a flattened image, as the shifted-view
    convolution reads and writes them).  numpy does it when BLAS cannot."""
    if not _loaded:
        _load()
    g = _prepare_rows(a, b, c)
    if g is None:
        _numpy_into(a, b, c, accumulate)
    else:
        _run(g, beta=1.0 if accumulate else 0.0)


def _prepare_rows(a, b, c):
    """:func:`matmul_into_rows`'s product as a :class:`_Gemm`, or None when BLAS cannot take these operands."""
    if not (a.dtype == b.dtype == c.dtype and a.ndim == 2 and b.ndim == 3 and c.ndim == 3):
        return None
    (count, m, n), k = c.shape, a.shape[1]
    fn = (_gemm if count == 1 else _gemm_batch).get(a.dtype)
    size = a.itemsize
    la = _operand(a.shape, a.strides, size)
    lb = _operand(b.shape[1:], b.strides[1:], size)
    if (fn is None or la is None or lb is None or b.shape != (count, k, n) or a.shape[0] != m
            or c.strides[2] != size or any(x % size for x in (b.strides[0], c.strides[0], c.strides[1]))):
        return None
    lc, sb, sc = c.strides[1] // size, b.strides[0] // size, c.strides[0] // size
    if lc < n or max(m, n, k, count, lc, la[1], lb[1], sb, sc) > _INT_MAX:
        return None
    return _Gemm(fn, count > 1, count, la, lb, m, n, k, a.ctypes.data, b.ctypes.data, c.ctypes.data, 0, sb, lc, sc,
                 size, count * m * n * k, c)


def _call(g: _Gemm, beta: float = 0.0) -> None:
    if not g.batched:
        g.fn(_ROW_MAJOR, g.la[0], g.lb[0], g.m, g.n, g.k, 1.0, g.pa, g.la[1], g.pb, g.lb[1], beta, g.pc, g.lc)
    else:
        g.fn(_ROW_MAJOR, g.la[0], g.lb[0], g.m, g.n, g.k, 1.0, g.pa, g.la[1], g.sa, g.pb, g.lb[1], g.sb,
             beta, g.pc, g.lc, g.sc, g.count)


def _stride_over(x, batch, size):
    """One element stride that walks ``x``'s matrices along the broadcast ``batch``, or None."""
    own = x.shape[:-2]
    if all(d == 1 for d in own):
        return 0  # one matrix for every batch entry
    if own != batch:
        return None  # broadcast along some batch dims only: no single stride
    return _batch_stride(own, x.strides[:-2], size)
