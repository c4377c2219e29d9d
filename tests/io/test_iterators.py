"""Data iterators, after MXNet 1.9's tests/python/unittest/test_io.py.

Expected values marked "MXNet 1.9.1" were produced by the real MXNet with the same inputs.
"""

from __future__ import annotations

import threading
import time

import anyio
import numpy as np
import pytest

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.io import (
    DataBatch,
    DataDesc,
    DataIter,
    NDArrayIter,
    PrefetchingIter,
    ResizeIter,
)

# -- NDArrayIter: last_batch_handle (MXNet's _test_last_batch_handle) --------------------------


def _ramp(kind: str, n: int = 1000):
    """Data whose example i is filled with i // 100, labels the same: MXNet's test data."""
    data = np.repeat((np.arange(n) // 100).astype(np.float32), 4).reshape(n, 2, 2)
    labels = (np.arange(n) // 100).astype(np.float32).reshape(n, 1)
    if kind == "NDArray":
        return mx.nd.array(data), mx.nd.array(labels)
    return data, labels


# handle, batches, (count of label 0, count of label 8)
HANDLES = [("pad", 8, (124, 100)), ("discard", 7, (100, 96)), ("roll_over", 7, (100, 96))]
FORMS = {
    "array": lambda d, lab: (d, lab),
    "list": lambda d, lab: ([d, d], lab),
    "dict": lambda d, lab: ({"data1": d, "data2": d}, lab),
    "list_no_label": lambda d, lab: ([d, d], None),
    "empty_label": lambda d, lab: (d, []),
}


@pytest.mark.parametrize("kind", ["NDArray", "ndarray"])
@pytest.mark.parametrize("form", list(FORMS))
def test_last_batch_handle(kind, form):
    data, labels = FORMS[form](*_ramp(kind))
    pad_last = None
    for handle, n_batches, (count0, count8) in HANDLES:
        it = NDArrayIter(data, labels, 128, False, last_batch_handle=handle)
        counts = np.zeros(10, int)
        seen = 0
        for batch in it:
            seen += 1
            assert batch.data[0].shape == (128, 2, 2)
            if handle == "pad":
                pad_last = batch.data[0].asnumpy()
            if labels is None or len(labels) == 0:
                assert not batch.label
                continue
            label = batch.label[0].asnumpy().ravel()
            assert (batch.data[0].asnumpy()[:, 0, 0] == label).all(), handle
            counts += np.bincount(label.astype(int), minlength=10)
        assert seen == n_batches, handle
        if labels is not None and len(labels):
            assert (counts[0], counts[8]) == (count0, count8), handle
    # roll_over's next epoch opens with the 104 cached examples, then the first 24: pad's last batch
    it.reset()
    assert np.array_equal(it.next().data[0].asnumpy(), pad_last)


def test_last_batch_handle_images():
    data = mx.nd.array(np.random.default_rng(0).uniform(0, 255, (5000, 1, 28, 28)))
    for handle, n_batches in [("pad", 40), ("discard", 39), ("roll_over", 39)]:
        assert sum(1 for _ in NDArrayIter(data, mx.nd.ones((5000, 1)), 128, last_batch_handle=handle)) == n_batches


def test_roll_over_first_batch_equals_pad_last():
    data, labels = _ramp("ndarray")
    last = list(NDArrayIter(data, labels, 128, last_batch_handle="pad"))[-1]
    it = NDArrayIter(data, labels, 128, last_batch_handle="roll_over")
    assert sum(1 for _ in it) == 7
    it.reset()
    first = it.next()
    assert first.pad == 104  # MXNet reports the rolled-over count as pad
    np.testing.assert_array_equal(first.data[0].asnumpy(), last.data[0].asnumpy())
    np.testing.assert_array_equal(first.label[0].asnumpy(), last.label[0].asnumpy())


def test_pad_batch_larger_than_data():
    """Batch 205 over 10 examples tiles the data from the start (MXNet 1.9.1: pad 195)."""
    it = NDArrayIter(np.arange(10, dtype=np.int32), None, 205, last_batch_handle="pad")
    batches = list(it)
    assert len(batches) == 1 and batches[0].pad == 195
    assert batches[0].data[0].dtype == np.float32  # numpy input becomes float32, as in MXNet
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(), np.resize(np.arange(10), 205))
    assert list(NDArrayIter(np.arange(10), None, 205, last_batch_handle="discard")) == []


@pytest.mark.parametrize("handle, expected", [
    # MXNet 1.9.1, np.random.seed(7), 10 examples, batch 4, three epochs
    ("roll_over", [[([8, 5, 0, 2], 0), ([1, 9, 7, 3], 0)],
                   [([6, 4, 9, 0], 2), ([8, 4, 1, 6], 0), ([5, 3, 2, 7], 0)],
                   [([9, 1, 8, 5], 0), ([0, 4, 3, 6], 0)]]),
])
def test_seeded_shuffle_matches_mxnet(handle, expected):
    np.random.seed(7)
    it = NDArrayIter(np.arange(10), np.arange(10) * 10, 4, shuffle=True, last_batch_handle=handle)
    got = []
    for _ in range(3):
        got.append([(b.data[0].asnumpy().astype(int).tolist(), b.pad) for b in it])
        it.reset()
    assert got == expected


def test_roll_over_without_shuffle_and_hard_reset():
    it = NDArrayIter(np.arange(10), None, 4, last_batch_handle="roll_over")
    epochs = []
    for _ in range(3):
        epochs.append([(b.data[0].asnumpy().astype(int).tolist(), b.pad) for b in it])
        it.reset()
    assert epochs == [[([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)],
                      [([8, 9, 0, 1], 2), ([2, 3, 4, 5], 0), ([6, 7, 8, 9], 0)],
                      [([0, 1, 2, 3], 0), ([4, 5, 6, 7], 0)]]  # MXNet 1.9.1
    list(it)
    it.hard_reset()
    assert it.next().data[0].asnumpy().tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("data, labels", [
    ("one", "one"), ("list", "one"), ("list", "list"), ("dict", "one"), ("dict", "dict"),
    ("one", None), ("list", None), ("dict", None),
])
def test_shuffle_keeps_pairs(data, labels):
    base, lab = _ramp("ndarray", 50)
    base = base + np.arange(50, dtype=np.float32)[:, None, None]  # every example distinct
    make = {"one": lambda a: a, "list": lambda a: [a, a], "dict": lambda a: {"a1": a, "a2": a}, None: lambda a: None}
    ordered = [b.data[0].asnumpy() for b in NDArrayIter(make[data](base), make[labels](lab), 1)]
    it = NDArrayIter(make[data](base), make[labels](lab), 1, shuffle=True)
    for i, batch in enumerate(it):  # MXNet's check: batch i is original example idx[i]
        np.testing.assert_array_equal(batch.data[0].asnumpy(), ordered[it.idx[i]])
        if labels is not None:
            assert batch.label[0].asnumpy()[0, 0] == lab[it.idx[i], 0]


def test_names_and_descs():
    d = np.zeros((6, 3), np.float32)
    assert [x.name for x in NDArrayIter([d] * 11, batch_size=2).provide_data][:3] == ["_0_data", "_10_data", "_1_data"]
    it = NDArrayIter({"b": d, "a": mx.nd.zeros((6, 2), dtype="int32")}, {"y": d}, 2)
    assert repr(it.provide_data) == ("[DataDesc[a,(2, 2),<class 'numpy.int32'>,NCHW], "
                                     "DataDesc[b,(2, 3),<class 'numpy.float32'>,NCHW]]")
    assert [x.name for x in it.provide_label] == ["y"]
    it = NDArrayIter(d, d[:, 0], 4, data_name="x", label_name="y")
    assert (it.provide_data[0].name, it.provide_label[0].name, it.provide_label[0].shape) == ("x", "y", (4,))
    with pytest.raises(MXAsyncError, match="examples"):
        NDArrayIter(d, np.zeros(5), 2)
    longer = NDArrayIter(d, np.arange(9), 4)  # MXNet reads the first source's count of a longer source
    assert [b.label[0].asnumpy().tolist() for b in longer] == [[0, 1, 2, 3], [4, 5, 0, 1]]
    with pytest.raises(MXAsyncError, match="last_batch_handle"):
        NDArrayIter(d, batch_size=2, last_batch_handle="wrap")


def test_batch_is_a_copy_and_batch_axis():
    src = mx.nd.array(np.arange(12).reshape(6, 2))
    batch = NDArrayIter(src, batch_size=3).next()
    batch.data[0][:] = -1
    assert src.asnumpy().min() == 0  # a batch never aliases the source
    it = NDArrayIter(np.arange(12).reshape(2, 6), batch_size=4, layout="CN")
    assert it.provide_data[0].shape == (2, 4) and [b.pad for b in it] == [0, 2]


def test_datadesc_and_databatch():
    desc = DataDesc("data", [2, 3], np.int32, "NTC")
    assert desc == ("data", (2, 3)) and desc.dtype is np.int32 and DataDesc.get_batch_axis(desc.layout) == 0
    assert DataDesc.get_batch_axis(None) == 0 and DataDesc.get_batch_axis("TNC") == 1
    assert DataDesc.get_list([("a", (1,))], [("a", np.int8)])[0].dtype is np.int8
    assert str(DataBatch([mx.nd.zeros((2, 3))])) == "DataBatch: data shapes: [(2, 3)] label shapes: None"
    with pytest.raises(TypeError):
        DataBatch(mx.nd.zeros((2,)))


# -- ResizeIter, PrefetchingIter -----------------------------------------------------------------


def test_resize_iter():
    it = ResizeIter(NDArrayIter(np.arange(10), batch_size=4), 5)
    assert [b.data[0].asnumpy()[0] for b in it] == [0, 4, 8, 0, 4]  # restarts the inner iterator
    it.reset()
    assert len(list(it)) == 5 and it.batch_size == 4 and it.provide_data[0].shape == (4,)


class _Failing(DataIter):
    """Yields ``good`` batches, then raises ``exc``."""

    def __init__(self, good: int, exc: Exception):
        super().__init__(2)
        self.good, self.exc, self.i = good, exc, 0
        self.provide_data = [DataDesc("f", (2,))]
        self.provide_label = []

    def reset(self):
        self.i = 0

    def next(self):
        self.i += 1
        if self.i > self.good:
            raise self.exc
        return DataBatch([mx.nd.ones((2,))], [], pad=0)


def _prefetch_threads() -> int:
    return sum(t.name.startswith("mxasync-prefetch") for t in threading.enumerate())


def test_prefetching_merges_and_renames():
    before = _prefetch_threads()
    a = NDArrayIter(np.arange(20).reshape(10, 2), np.arange(10), 4)
    b = NDArrayIter(np.arange(30).reshape(10, 3), np.arange(10) * 2, 4)
    with PrefetchingIter([a, b], rename_data=[{"data": "a"}, {"data": "b"}],
                         rename_label=[{"softmax_label": "la"}, {"softmax_label": "lb"}]) as it:
        assert [d.name for d in it.provide_data] == ["a", "b"] and it.batch_size == 4
        assert [d.name for d in it.provide_label] == ["la", "lb"]
        for _ in range(2):
            batches = list(it)
            assert [x.pad for x in batches] == [0, 0, 2]
            assert [len(x.data) for x in batches] == [2, 2, 2] and batches[1].data[1].shape == (4, 3)
            np.testing.assert_array_equal(batches[1].label[1].asnumpy(), 2 * batches[1].label[0].asnumpy())
            assert it.next is not None and not it.iter_next()
            it.reset()
    assert _prefetch_threads() == before


def test_prefetching_reraises_loader_errors():
    before = _prefetch_threads()
    it = PrefetchingIter([_Failing(2, ValueError("disk on fire"))])
    assert len([it.next(), it.next()]) == 2
    with pytest.raises(ValueError, match="disk on fire"):
        it.next()
    it.reset()
    assert it.next().data[0].shape == (2,)  # usable again after reset
    it.next()
    time.sleep(0.05)  # the failing prefetch has run by now; reset re-raises it
    with pytest.raises(ValueError, match="disk on fire"):
        it.reset()
    it.close()
    with pytest.raises(MXAsyncError, match="closed"):
        it.next()
    del it
    assert _prefetch_threads() == before


def test_prefetching_mismatched_lengths():
    with PrefetchingIter([NDArrayIter(np.zeros(8), batch_size=4), NDArrayIter(np.zeros(12), batch_size=4)]) as it:
        with pytest.raises(MXAsyncError, match="different numbers"):
            list(it)


# -- async iteration ---------------------------------------------------------------------------


class _Slow(DataIter):
    """A blocking loader: 4 batches of 20 ms each."""

    def __init__(self):
        super().__init__(1)
        self.i = 0

    def reset(self):
        self.i = 0

    def next(self):
        if self.i == 4:
            raise StopIteration
        self.i += 1
        time.sleep(0.02)
        return DataBatch([mx.nd.full((1,), self.i)], [], pad=0)


def test_async_for_keeps_the_loop_responsive():
    async def main():
        ticks = 0
        got = []

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.sleep(0.002)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            async for batch in _Slow():
                got.append(float((await batch.data[0].asnumpy_async())[0]))
            tg.cancel_scope.cancel()
        return got, ticks

    got, ticks = anyio.run(main)
    assert got == [1.0, 2.0, 3.0, 4.0]
    assert ticks >= 5  # 80 ms of loading while the ticker kept running (about 40 ticks when idle)


def test_async_for_matches_sync():
    data = np.arange(40).reshape(10, 4)

    async def collect(it):
        out = [b.data[0].asnumpy() async for b in it]
        await it.reset_async()
        out += [b.data[0].asnumpy() async for b in it]
        return out

    expected = [b.data[0].asnumpy() for b in NDArrayIter(data, batch_size=3)] * 2
    for it in (NDArrayIter(data, batch_size=3), PrefetchingIter(NDArrayIter(data, batch_size=3))):
        got = anyio.run(collect, it)
        assert len(got) == len(expected) and all(np.array_equal(g, e) for g, e in zip(got, expected, strict=True))
