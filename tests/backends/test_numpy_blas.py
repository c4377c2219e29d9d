"""The engine's private BLAS (``mxasync.backends.numpy.blas``): numpy's results, its own thread count."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from mxasync.backends.numpy import blas, parallel

rng = np.random.default_rng(7)


def _rand(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.fixture
def through_blas(monkeypatch):
    """Count the calls that fell back to numpy, so a test can insist on the BLAS path."""
    fallbacks = []
    original = blas._numpy
    monkeypatch.setattr(blas, "_numpy", lambda a, b, out: (fallbacks.append((a.shape, b.shape)), original(a, b, out))[1])
    return fallbacks


needs_blas = pytest.mark.skipif(not blas.available(), reason="the scipy-openblas32 wheel is not installed")


@pytest.fixture(params=[1, 2], ids=["one-thread-calls", "lone-gemm-gets-cores"])
def blas_threads(request, monkeypatch):
    """Both policies: one thread a call side by side, or big calls cut into a block a core (default)."""
    monkeypatch.setattr(blas, "_threads", request.param)
    return request.param


@needs_blas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape,b_shape", [
    ((128, 96), (96, 80)),             # plain 2-D
    ((1, 20, 25), (16, 1, 25, 144)),   # convolution: one weight, a batch of column blocks
    ((8, 30, 40), (8, 40, 50)),        # batch_dot
    ((30, 40), (8, 40, 50)),           # broadcast lhs
    ((8, 30, 40), (40, 50)),           # broadcast rhs
    ((2, 3, 30, 40), (2, 3, 40, 50)),  # two batch dims
])
def test_matches_numpy_on_the_blas_path(dtype, a_shape, b_shape, through_blas, blas_threads):
    a, b = _rand(a_shape, dtype), _rand(b_shape, dtype)
    want = np.matmul(a, b)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for lhs in (a, np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)):  # C order and transposed storage
        got = blas.matmul(lhs, b)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    out = np.full(want.shape, np.nan, dtype)
    assert blas.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    assert through_blas == []


def test_what_blas_cannot_take_falls_back_to_numpy(through_blas):
    a, b = _rand((64, 64)), _rand((64, 64))
    cases = [
        (a[:, ::2], b[::2]),                          # strided rows and columns
        (a.astype(np.int64), b.astype(np.int64)),     # integers
        (_rand((4, 4)), _rand((4, 4))),               # too small to be worth a call
        (_rand((2, 1, 30, 40)), _rand((1, 3, 40, 50))),  # broadcast along one batch dim only
        (a.astype(np.float16), b.astype(np.float16)),
    ]
    for x, y in cases:
        np.testing.assert_allclose(blas.matmul(x, y), np.matmul(x, y), rtol=1e-3, atol=1e-2)
    assert len(through_blas) == len(cases)
    with pytest.raises(ValueError):
        blas.matmul(_rand((64, 30)), _rand((40, 64)))  # numpy's own shape error


@needs_blas
def test_out_overlapping_an_input_is_still_right():
    a = _rand((96, 96))
    want = a @ a
    blas.matmul(a, a, out=a)
    np.testing.assert_allclose(a, want, rtol=1e-4, atol=1e-4)


@needs_blas
def test_blocks_follow_the_machine_and_every_pool_stays_as_it_was():
    """A big GEMM is cut into one block a core (the default); OpenBLAS's own pool stays at one thread
    (the blocks are run by the numpy backend's kernel threads) and numpy's BLAS keeps its count."""
    import threadpoolctl

    if not os.environ.get("MXASYNC_BLAS_THREADS"):
        from mxasync.runtime.engine.threads import cpu_count

        assert blas.threads() == cpu_count()

    def pools():
        return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}

    before = {path: n for path, n in pools().items() if "scipy_openblas32" not in path}
    blas.matmul(_rand((256, 256)), _rand((256, 256)))
    after = pools()
    assert {path: n for path, n in after.items() if "scipy_openblas32" not in path} == before and before
    assert [n for path, n in after.items() if "scipy_openblas32" in path] == [1]


@needs_blas
@pytest.mark.parametrize("case", ["columns", "rows", "batch", "transposed"])
def test_big_gemms_are_cut_into_one_block_a_thread_and_small_ones_run_whole(monkeypatch, case):
    """Blocks of columns (wide products), rows (tall ones) or batch entries, each a whole product of its
    own; below ONE_THREAD_WORK the caller runs the product whole (a hand-over costs more)."""
    monkeypatch.setattr(blas, "_threads", 3)
    monkeypatch.setattr(parallel, "CHECK_LOAD", False)  # the kernel threads take blocks whatever the load
    cuts = []
    real = parallel.split
    monkeypatch.setattr(parallel, "split", lambda fn, n, **kw: (cuts.append((n, kw)), real(fn, n, **kw))[1])
    a, b = {"columns": (_rand((64, 576)), _rand((576, 1000))), "rows": (_rand((1000, 576)), _rand((576, 64))),
            "batch": (_rand((64, 64)), _rand((5, 64, 900))),
            "transposed": (_rand((576, 64)).T, _rand((1000, 576)).T)}[case]
    got = blas.matmul(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-4, atol=1e-3)
    assert cuts and cuts[-1][1] == {"parts": 6}
    assert cuts[-1][0] == {"columns": 63, "rows": 63, "batch": 5, "transposed": 63}[case]  # 16-wide blocks
    out = _rand(got.shape)
    before = out.copy()
    blas.matmul(a, b, out=out, accumulate=True)
    np.testing.assert_allclose(out, before + got, rtol=1e-4, atol=1e-3)
    cuts.clear()
    small = blas.matmul(_rand((128, 512)), _rand((512, 10)))  # 0.66M multiply-adds
    assert small.shape == (128, 10) and not cuts
    monkeypatch.setattr(blas, "_threads", 1)  # MXASYNC_BLAS_THREADS=1: every call whole, in its caller
    np.testing.assert_allclose(blas.matmul(a, b), got, rtol=1e-5, atol=1e-4)
    assert not cuts


@pytest.mark.parametrize("shape", [(128, 96, 80), (4, 3, 5)], ids=["blas", "small-on-numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_matmul_accumulates_onto_out(shape, dtype):
    m, k, n = shape
    a, b = (_rand((m, k)) * 4).astype(dtype), (_rand((k, n)) * 4).astype(dtype)
    out = (_rand((m, n)) * 4).astype(dtype)
    before = out.copy()
    assert blas.matmul(a, b, out=out, accumulate=True) is out
    np.testing.assert_allclose(out, before + a @ b, rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match="accumulate needs out"):
        blas.matmul(a, b, accumulate=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("accumulate", [False, True])
def test_matmul_into_rows_reads_and_writes_strided_windows(dtype, accumulate):
    """``b`` and ``c`` as windows of longer rows (what the shifted-view convolution passes); ints take numpy."""
    a = (_rand((5, 7)) * 4).astype(dtype)
    rows = (_rand((3, 7, 40)) * 4).astype(dtype)
    b = rows[:, :, 3:33]
    target = (_rand((3, 5, 36)) * 4).astype(dtype)
    c = target[:, :, 2:32]
    before = target.copy()
    blas.matmul_into_rows(a, b, c, accumulate=accumulate)
    expected = before[:, :, 2:32] * accumulate + np.matmul(a, b)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(target[:, :, :2], before[:, :, :2])  # nothing outside the window
    np.testing.assert_array_equal(target[:, :, 32:], before[:, :, 32:])


@needs_blas
def test_concurrent_callers_each_get_their_own_product(blas_threads):
    pairs = [(_rand((160, 120)), _rand((120, 140))) for _ in range(4)]
    results = [None] * len(pairs)

    def work(i):
        for _ in range(10):
            results[i] = blas.matmul(*pairs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), got in zip(pairs, results, strict=True):
        np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


_SPIN_PROBE = """
import time
import numpy as np
from mxasync.backends.numpy import blas, parallel
from mxasync.backends.numpy import parallel
blas._threads = 2
parallel.CHECK_LOAD = False  # a call cut for two threads, whatever else the machine runs
a = np.ones((384, 384), np.float32)
blas.matmul(a, a)
c0 = time.process_time()
time.sleep(0.1)
print(time.process_time() - c0)
"""


@needs_blas
def test_pool_threads_sleep_as_soon_as_a_call_ends():
    """OpenBLAS's default spins its pool threads ~0.1 s after a call: a core burned per step.
    (In a fresh process: numpy's own pool, used by other tests here, spins like that.)"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _SPIN_PROBE], capture_output=True, text=True, timeout=120,
                         check=True)
    spent = float(out.stdout.strip().splitlines()[-1])
    assert spent < 0.05, f"{spent * 1e3:.0f} ms of CPU while idle for 100 ms"
