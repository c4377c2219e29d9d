"""The numpy backend's intra-op splitting: every chunk runs once, errors surface, nesting stays inline, and
the cut never depends on the load or the thread (issue 25, 5a)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mxasync.backends.numpy import parallel


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(parallel, "_NTHREADS", 2)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(parallel, "CHECK_LOAD", False)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 100])
def test_every_index_runs_once(two_threads, n):
    seen = np.zeros(n, dtype=int)
    lock = threading.Lock()

    def fn(lo, hi):
        with lock:
            seen[lo:hi] += 1

    parallel.split(fn, n)
    assert (seen == 1).all()


def test_chunks_respect_min_size(two_threads):
    sizes = []
    parallel.split(lambda lo, hi: sizes.append(hi - lo), 10, min_size=6)
    assert sizes == [10]


def test_results_match_one_call(two_threads):
    x = np.random.default_rng(0).standard_normal(100_001).astype(np.float32)
    out = np.empty_like(x)
    parallel.split(lambda lo, hi: np.tanh(x[lo:hi], out=out[lo:hi]), x.size)
    np.testing.assert_array_equal(out, np.tanh(x))


def test_error_in_a_chunk_is_raised(two_threads):
    def fn(lo, hi):
        if lo > 0:
            raise ValueError(f"chunk {lo}")

    with pytest.raises(ValueError, match="chunk"):
        parallel.split(fn, 8)
    parallel.split(lambda lo, hi: None, 8)  # the helpers survive it


def test_nested_split_runs_inline_in_helpers(two_threads):
    inner = []

    def fn(lo, hi):
        me = threading.current_thread().name
        in_helper = getattr(parallel._local, "helper", False)
        # same cut as anywhere (the bits must not depend on the thread); inside a helper every chunk
        # runs in that helper (a split from the calling thread may hand chunks to an idle helper)
        parallel.split(lambda a, b: inner.append((b - a, not in_helper or threading.current_thread().name == me)), 4)

    for _ in range(20):
        parallel.split(fn, 4)
    assert sum(n for n, _ in inner) == 20 * 4 * 4
    assert all(here for _, here in inner)
    assert sorted({n for n, _ in inner}) == [1]  # 4 chunks of 1 at 2 threads, nested or not


def test_one_thread_never_starts_helpers(monkeypatch):
    monkeypatch.setattr(parallel, "_NTHREADS", 1)
    assert not parallel.worth_splitting(10**9)
    names = []
    parallel.split(lambda lo, hi: names.append(threading.current_thread().name), 5)
    assert names == [threading.current_thread().name]


def test_thread_count_from_env(monkeypatch):
    monkeypatch.setenv("MXASYNC_KERNEL_THREADS", "3")
    assert parallel._configured() == 3
    monkeypatch.setenv("MXASYNC_KERNEL_THREADS", "0")
    assert parallel._configured() == 1
    monkeypatch.setenv("MXASYNC_KERNEL_THREADS", "many")
    assert parallel._configured() == parallel._cores()


def test_the_load_decides_who_runs_the_chunks_never_the_cut(monkeypatch):
    monkeypatch.setattr(parallel, "_NTHREADS", 2)
    monkeypatch.setattr(parallel, "idle_cores", lambda: 0)
    assert parallel.worth_splitting(10**9)  # cut as on an idle machine...
    assert parallel._helpers_wanted(4) == 0  # ...but no helper is woken: the caller runs every chunk
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    assert parallel.worth_splitting(10**9)
    assert parallel._helpers_wanted(4) == 1
    assert parallel.idle_cores() >= 0
