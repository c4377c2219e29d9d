"""DataLoader: ordering, last_batch, batchify, thread and process workers (same batches), pin_memory,
auto_reload, ``async for`` and shutdown."""

from __future__ import annotations

import os
import tempfile
import threading

import anyio
import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon.data import ArrayDataset, BatchSampler, DataLoader, Dataset, SequentialSampler
from mxasync.gluon.data.dataloader import default_batchify_fn


class Squares(Dataset):
    """Module level so process workers can unpickle it."""

    def __init__(self, n=23, nd_samples=False):
        self.n, self.nd_samples = n, nd_samples

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = np.full((3,), i * i, dtype=np.float32)
        return (mx.nd.array(x) if self.nd_samples else x), i


class Failing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError(f"sample {i} is broken")
        return np.float32(i)


def _as_lists(batches):
    return [[b.asnumpy().tolist() for b in batch] for batch in batches]


def _expected(n, bs, last_batch="keep"):
    out, idx = [], list(range(n))
    for s in range(0, n, bs):
        chunk = idx[s:s + bs]
        if len(chunk) < bs and last_batch != "keep":
            break
        out.append([[[float(i * i)] * 3 for i in chunk], chunk])
    return out


@pytest.mark.parametrize("last_batch", ["keep", "discard"])
def test_order_and_last_batch_single_process(last_batch):
    loader = DataLoader(Squares(), batch_size=5, last_batch=last_batch)
    assert len(loader) == (5 if last_batch == "keep" else 4)
    assert _as_lists(loader) == _expected(23, 5, last_batch)


def test_rollover_across_epochs():
    loader = DataLoader(ArrayDataset(np.arange(10)), batch_size=4, last_batch="rollover")
    first = [b.asnumpy().tolist() for b in loader]
    second = [b.asnumpy().tolist() for b in loader]
    assert first == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert second == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]


@pytest.mark.parametrize("thread_pool", [None, True])
def test_thread_workers_give_the_same_batches(thread_pool):
    loader = DataLoader(Squares(nd_samples=True), batch_size=4, num_workers=2, thread_pool=thread_pool, prefetch=3)
    try:
        for _ in range(2):  # the pool serves several epochs
            assert _as_lists(loader) == _expected(23, 4)
    finally:
        loader.close()


class BigSamples(Dataset):
    """12 KB samples (whole batches go through shared memory) plus a small NDArray; the last one fails."""

    def __len__(self):
        return 14

    def __getitem__(self, i):
        if i == 13:
            raise KeyError(f"sample {i} is broken")
        big = np.random.RandomState(i).standard_normal((50, 60)).astype(np.float32)
        return big, mx.nd.array([i, -i], dtype="int32"), i


def test_process_workers(monkeypatch):
    # one pool for all the checks: starting worker processes is the slow part. multiprocessing keeps its
    # temp dir (the forkserver's socket) for the whole session: not in this test's tmp dir, removed after it
    if os.path.isdir("/tmp"):
        monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    loader = DataLoader(BigSamples(), batch_size=5, num_workers=2, thread_pool=False)
    try:
        for _ in range(2):  # the pool serves several epochs, an error does not break it
            it = iter(loader)
            for b in range(2):
                big, small, idx = next(it)
                want = list(range(5 * b, 5 * b + 5))
                assert idx.asnumpy().tolist() == want and idx.dtype == np.int64
                assert small.dtype == np.int32 and small.asnumpy().tolist() == [[i, -i] for i in want]
                assert big.dtype == np.float32 and big.context == mx.cpu()
                np.testing.assert_array_equal(big.asnumpy()[-1], BigSamples()[want[-1]][0])
            with pytest.raises(KeyError, match="sample 13 is broken"):
                next(it)
        it = iter(loader)
        next(it)
        del it  # the batches requested ahead are dropped (their shared memory freed when they arrive)
        assert len([b for b in [next(iter(loader))]]) == 1
    finally:
        loader.close()
    with pytest.raises(RuntimeError, match="closed"):
        next(iter(loader))


def test_shuffle_covers_everything_once():
    np.random.seed(1)
    loader = DataLoader(ArrayDataset(np.arange(20)), batch_size=6, shuffle=True)
    seen = np.concatenate([b.asnumpy() for b in loader])
    assert sorted(seen.tolist()) == list(range(20)) and seen.tolist() != list(range(20))


def test_argument_checks():
    ds = ArrayDataset(np.arange(4))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds)
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(ds, 2, shuffle=True, sampler=SequentialSampler(4))
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(ds, 2, batch_sampler=BatchSampler(SequentialSampler(4), 2))
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, 2, timeout=0)
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(4), 3))
    assert [b.asnumpy().tolist() for b in loader] == [[0, 1, 2], [3]]


def test_default_batchify_nested_and_dtypes():
    samples = [(mx.nd.ones((2,)) * i, (i, np.float64(i) / 2)) for i in range(3)]
    data, (ints, halves) = default_batchify_fn(samples)
    assert data.shape == (3, 2) and data.asnumpy()[2].tolist() == [2.0, 2.0]
    assert ints.dtype == np.int64 and ints.asnumpy().tolist() == [0, 1, 2]
    assert halves.dtype == np.float64 and halves.asnumpy().tolist() == [0.0, 0.5, 1.0]


def test_pin_memory():
    loader = DataLoader(ArrayDataset(np.ones((4, 2))), 2, pin_memory=True)
    assert all(b.context == mx.cpu_pinned(0) for b in loader)
    loader = DataLoader(ArrayDataset(np.ones((4, 2)), np.arange(4)), 2, pin_memory=True, num_workers=1)
    assert all(d.context == mx.cpu_pinned(0) and lab.context == mx.cpu_pinned(0) for d, lab in loader)
    loader.close()


def test_worker_error_reaches_the_caller():
    loader = DataLoader(Failing(), batch_size=1, num_workers=2)
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0.0]
    assert next(it).asnumpy().tolist() == [1.0]
    with pytest.raises(KeyError, match="sample 2 is broken"):
        next(it)
    loader.close()


def test_process_workers_need_picklable_functions():
    with pytest.raises(mx.MXNetError, match="batchify_fn must be picklable"):
        DataLoader(ArrayDataset(np.arange(4)), 2, num_workers=1, thread_pool=False, batchify_fn=lambda s: s)
    with pytest.raises(mx.MXNetError, match="picklable"):
        DataLoader(ArrayDataset(np.arange(4)).transform(lambda x: x), 2, num_workers=1, thread_pool=False)


class _Blocking(Dataset):
    def __init__(self, gate):
        self.gate = gate

    def __len__(self):
        return 2

    def __getitem__(self, i):
        self.gate.wait()
        return np.float32(i)


def test_timeout_names_the_limit():
    gate = threading.Event()
    loader = DataLoader(_Blocking(gate), 1, num_workers=1, timeout=0.2)
    try:
        with pytest.raises(TimeoutError, match="timeout=0.2"):
            next(iter(loader))
    finally:
        gate.set()
        loader.close()


class _Counting(Dataset):
    def __init__(self):
        self.reads = []

    def __len__(self):
        return 3

    def __getitem__(self, i):
        self.reads.append(i)
        return np.float32(i)


def test_auto_reload_prefetches_the_next_epoch():
    ds = _Counting()
    loader = DataLoader(ds, 1, num_workers=1, auto_reload=True, prefetch=1)
    for _ in range(100):  # the first batch is requested at construction
        if ds.reads:
            break
        threading.Event().wait(0.01)
    assert ds.reads[:1] == [0]
    assert [b.asnumpy().tolist() for b in loader] == [[0.0], [1.0], [2.0]]
    assert [b.asnumpy().tolist() for b in loader] == [[0.0], [1.0], [2.0]]
    loader.close()
    lazy = DataLoader(_Counting(), 1, num_workers=1)
    assert lazy._dataset.reads == []  # auto_reload=False (MXNet's default): nothing until iterated
    lazy.close()


@pytest.mark.parametrize("num_workers", [0, 2])
def test_async_for(num_workers):
    loader = DataLoader(Squares(), batch_size=5, num_workers=num_workers)

    async def main():
        ticks = 0
        out = []

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.sleep(0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            async for batch in loader:
                out.append(batch)
            tg.cancel_scope.cancel()
        return out, ticks

    out, ticks = anyio.run(main)
    loader.close()
    assert _as_lists(out) == _expected(23, 5)
    assert ticks > 0  # the loop ran other tasks while batches were read


def _shared_backend():
    try:
        mx.nd.zeros((1,), ctx=mx.cpu_shared(0))
        return True
    except mx.MXNetError:
        return False


@pytest.mark.skipif(not _shared_backend(), reason="reinstall mxasync (pip install -e .) to register numpy_shared")
def test_cpu_shared_arrays_mix_with_host_copies():
    shared = mx.nd.array([1.0, 2.0], ctx=mx.cpu_shared(0))
    assert shared.context == mx.cpu_shared(0)
    assert (shared.as_in_context(mx.cpu()) + 1).asnumpy().tolist() == [2.0, 3.0]
    assert shared.as_in_context(mx.cpu_pinned(0)).asnumpy().tolist() == [1.0, 2.0]


def test_batches_cancelled_by_close_report_it():
    # close() cancels batches no thread has taken yet; their futures' done-callback used to call
    # f.exception(), which raises CancelledError, so a reader of such a batch waited out its timeout
    from mxasync.gluon.data._workers import ThreadWorkers

    gate = threading.Event()

    class Slow(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            gate.wait(10)
            return i

    workers = ThreadWorkers(1, Slow())
    pending = [workers.submit([i], default_batchify_fn) for i in range(3)]
    workers.close()
    gate.set()
    assert pending[0].get(10, False).asnumpy().tolist() == [0]
    with pytest.raises(mx.MXNetError, match="closed before this batch was read"):
        pending[2].get(10, False)


def test_batchify_gives_mx_np_batches_of_ndarray_samples_under_np_array():
    samples = [mx.nd.array([i, i + 1]) for i in range(3)]
    assert type(default_batchify_fn(samples)) is mx.nd.NDArray
    with mx.util.np_array(True):
        batch = default_batchify_fn(samples)
        label_batch = default_batchify_fn([(s, mx.np.array(i, dtype="int32")) for i, s in enumerate(samples)])
    assert isinstance(batch, mx.np.ndarray) and batch.asnumpy().tolist() == [[0, 1], [1, 2], [2, 3]]
    assert all(isinstance(b, mx.np.ndarray) for b in label_batch) and label_batch[1].dtype == np.int32
