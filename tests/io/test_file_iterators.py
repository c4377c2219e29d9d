"""File-backed iterators: CSVIter, MNISTIter and ImageRecordIter.

Expected values marked "MXNet 1.9.1" were produced by the real MXNet with the same inputs.
"""

from __future__ import annotations

import gzip
import struct

import anyio
import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io import CSVIter, ImageRecordIter, LibSVMIter, MNISTIter
from mxasync.io.recordio import IRHeader, MXRecordIO, pack, pack_img

# -- CSVIter -----------------------------------------------------------------------------------


@pytest.fixture
def csv_files(tmp_path):
    np.savetxt(tmp_path / "d.csv", np.arange(30).reshape(10, 3), fmt="%d", delimiter=",")
    np.savetxt(tmp_path / "l.csv", np.arange(10) * 10, fmt="%d", delimiter=",")
    return tmp_path / "d.csv", tmp_path / "l.csv"


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint8", None])
def test_csv_dtypes(csv_files, dtype):
    it = CSVIter(data_csv=csv_files[0], data_shape=(3,), label_csv=csv_files[1], batch_size=4, dtype=dtype)
    want = np.dtype(dtype or "float32")
    assert it.provide_data == [("data", (4, 3))] and it.provide_data[0].dtype == want.type
    assert it.provide_label == [("softmax_label", (4,))]
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    assert all(b.data[0].dtype == want.type and b.label[0].dtype == want.type for b in batches)
    rows = [(b.data[0].asnumpy()[:, 0] // 3).tolist() for b in batches]
    assert rows == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    assert batches[2].label[0].asnumpy().tolist() == [80, 90, 0, 10]
    assert batches[2].index.tolist() == [8, 9, 0, 1]


@pytest.mark.parametrize("batch_size, epochs", [
    # MXNet 1.9.1: first row of each batch and pad, three epochs; round_batch wraps and the next epoch
    # starts after the wrapped rows
    (3, [[(0, 0), (3, 0), (6, 0), (9, 2)], [(2, 0), (5, 0), (8, 1)], [(1, 0), (4, 0), (7, 0)]]),
    (4, [[(0, 0), (4, 0), (8, 2)], [(2, 0), (6, 0)], [(0, 0), (4, 0), (8, 2)]]),
    (5, [[(0, 0), (5, 0)]] * 3),
])
def test_csv_round_batch(csv_files, batch_size, epochs):
    it = CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=batch_size)
    for expected in epochs:
        assert [(int(b.data[0].asnumpy()[0, 0]) // 3, b.pad) for b in it] == expected
        it.reset()


def test_csv_without_round_batch_and_labels(csv_files, tmp_path):
    it = CSVIter(data_csv=csv_files[0], data_shape=(1, 3), batch_size=4, round_batch=False)
    for _ in range(2):
        batches = list(it)
        assert [b.pad for b in batches] == [0, 0, 2] and batches[0].data[0].shape == (4, 1, 3)
        assert batches[2].data[0].asnumpy()[:2, 0, 0].tolist() == [24, 27]
        assert not batches[2].label[0].asnumpy().any()  # no label_csv: zeros
        it.reset()
    assert it.getdata().shape == (4, 1, 3) if it.iter_next() else False
    it = CSVIter(data_csv=csv_files[0], data_shape=(3,), label_csv=csv_files[0], label_shape=(3,), batch_size=5)
    assert it.next().label[0].shape == (5, 3)
    with pytest.raises(MXAsyncError, match="line 1 has 3 values"):
        CSVIter(data_csv=csv_files[0], data_shape=(2,), batch_size=2)
    with pytest.raises(MXAsyncError, match="not supported"):
        CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=2, dtype="float64")


# -- MNISTIter ---------------------------------------------------------------------------------


def _write_idx(path, array: np.ndarray, compress: bool = False) -> None:
    raw = struct.pack(">I", 0x0800 + array.ndim) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()
    path.write_bytes(gzip.compress(raw, 1) if compress else raw)


@pytest.fixture(scope="module")
def mnist_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mnist")
    rng = np.random.default_rng(0)
    _write_idx(tmp / "img", rng.integers(0, 256, (60000, 28, 28), dtype=np.uint8))
    _write_idx(tmp / "lab", rng.integers(0, 10, 60000, dtype=np.uint8))
    return tmp / "img", tmp / "lab"


def test_mnist_600_batches_and_reset(mnist_files):
    it = MNISTIter(image=mnist_files[0], label=mnist_files[1], data_shape=(784,), batch_size=100,
                   shuffle=True, flat=True, silent=True, seed=10)
    assert sum(1 for _ in it) == 600
    it.reset()
    it.iter_next()
    label_0 = it.getlabel().asnumpy().ravel()
    for _ in range(4):
        it.iter_next()
    it.reset()
    it.iter_next()
    np.testing.assert_array_equal(label_0, it.getlabel().asnumpy().ravel())
    assert it.getdata().shape == (100, 784)


def test_mnist_layout_scale_parts_and_gzip(tmp_path):
    images = (np.arange(50, dtype=np.uint8)[:, None, None] * np.ones((1, 4, 5), np.uint8))
    _write_idx(tmp_path / "img.gz", images, compress=True)
    _write_idx(tmp_path / "lab.gz", np.arange(50, dtype=np.uint8), compress=True)
    args = dict(image=tmp_path / "img.gz", label=tmp_path / "lab.gz", batch_size=4, silent=True)
    batch = MNISTIter(shuffle=False, **args).next()
    assert batch.data[0].shape == (4, 1, 4, 5) and batch.label[0].shape == (4,)
    assert batch.data[0].asnumpy()[1, 0, 0, 0] == pytest.approx(1 / 256)  # MXNet scales by 1/256
    assert MNISTIter(flat=True, **args).provide_data[0].shape == (4, 20)
    parts = [[lab for b in MNISTIter(shuffle=False, num_parts=3, part_index=p, **args)
              for lab in b.label[0].asnumpy().astype(int)] for p in range(3)]
    # MXNet 1.9.1: contiguous parts of 16, 17, 17 images, full batches only
    assert parts == [list(range(16)), list(range(16, 32)), list(range(33, 49))]
    shuffled = [[int(v) for b in MNISTIter(shuffle=True, seed=s, **args) for v in b.label[0].asnumpy()] for s in (1, 1, 2)]
    assert shuffled[0] == shuffled[1] != shuffled[2] and len(set(shuffled[0])) == 48
    (tmp_path / "bad").write_bytes(b"\x00\x00\x08\x03\x00")
    with pytest.raises(MXAsyncError, match="truncated"):
        MNISTIter(image=tmp_path / "bad", label=tmp_path / "lab.gz")


# -- ImageRecordIter (the NDArray face of the numpy RecordImagePipeline) --------------------------


@pytest.fixture
def image_rec(tmp_path):
    """10 PNG records, record i filled with (10i, 10i+1, 10i+2) RGB and labelled (i, 2i)."""
    path = tmp_path / "img.rec"
    with MXRecordIO(str(path), "w") as w:
        for i in range(10):
            rgb = np.broadcast_to(np.array([10 * i, 10 * i + 1, 10 * i + 2], np.uint8), (6, 6, 3))
            w.write(pack_img(IRHeader(2, [float(i), 2.0 * i], i, 0), rgb[:, :, ::-1].copy(), img_fmt=".png"))
    return path


def test_image_record_iter_batches(image_rec):
    with ImageRecordIter(path_imgrec=image_rec, data_shape=(3, 4, 4), batch_size=4, label_width=2,
                         preprocess_threads=2, mean_r=1, mean_g=2, std_b=2, data_name="x", label_name="y") as it:
        assert it.provide_data == [("x", (4, 3, 4, 4))] and it.provide_label == [("y", (4, 2))]
        batches = list(it)
        assert [b.pad for b in batches] == [0, 0, 2]
        first = batches[0].data[0].asnumpy()
        assert first.dtype == np.float32 and first.shape == (4, 3, 4, 4)
        # RGB order, then (x - mean) / std per channel
        np.testing.assert_allclose(first[1, :, 0, 0], [10 - 1, 11 - 2, 12 / 2])
        np.testing.assert_array_equal(batches[1].label[0].asnumpy()[:, 1], [8, 10, 12, 14])
        np.testing.assert_array_equal(batches[2].label[0].asnumpy()[:, 0], [8, 9, 0, 1])
        it.reset()  # round_batch: the next epoch starts after the two wrapped records, as in MXNet
        assert [b.label[0].asnumpy()[0, 0] for b in it] == [2, 6]
        it.reset()
        assert it.iter_next() and it.getdata().shape == (4, 3, 4, 4) and it.getpad() == 0


def test_image_record_iter_uint8_async_and_errors(image_rec, tmp_path):
    it = ImageRecordIter(path_imgrec=image_rec, data_shape=(3, 6, 6), batch_size=5, label_width=2,
                         dtype="uint8", shuffle=True, seed=1)

    async def collect():
        return [(b.data[0].asnumpy(), b.label[0].asnumpy()) async for b in it]

    got = anyio.run(collect)
    assert len(got) == 2 and got[0][0].dtype == np.uint8
    labels = np.concatenate([lab[:, 0] for _, lab in got])
    assert sorted(labels.tolist()) == list(range(10))  # a partition is read completely, once
    np.testing.assert_array_equal(np.concatenate([d[:, 0, 0, 0] for d, _ in got]), 10 * labels)
    it.close()
    bad = tmp_path / "bad.rec"
    with MXRecordIO(str(bad), "w") as w:
        w.write(pack(IRHeader(0, 1.0, 0, 0), b"this is not an image"))
    with ImageRecordIter(path_imgrec=bad, data_shape=(3, 4, 4), batch_size=1) as it:
        with pytest.raises(MXAsyncError, match="record 0"):
            it.next()


# -- LibSVMIter --------------------------------------------------------------------------------


def test_libsvm_iter(tmp_path):
    path = tmp_path / "d.libsvm"
    path.write_text("1 0:1.5 3:2\n0 1:1\n2 2:3 4:0.5\n1\n3 0:1 1:1 2:1 3:1 4:1  # a comment\n")
    it = LibSVMIter(data_libsvm=path, data_shape=(5,), batch_size=2)
    assert it.provide_data == [("data", (2, 5))] and it.provide_label == [("softmax_label", (2,))]
    epochs = []
    for _ in range(2):
        epochs.append([(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it])
        it.reset()
    assert epochs == [  # MXNet 1.9.1 (dense here, CSR there)
        [([[1.5, 0, 0, 2, 0], [0, 1, 0, 0, 0]], [1, 0], 0), ([[0, 0, 3, 0, 0.5], [0, 0, 0, 0, 0]], [2, 1], 0),
         ([[1, 1, 1, 1, 1], [1.5, 0, 0, 2, 0]], [3, 1], 1)],
        [([[0, 1, 0, 0, 0], [0, 0, 3, 0, 0.5]], [0, 2], 0), ([[0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], [1, 3], 0)]]
    parts = [[lab for b in LibSVMIter(data_libsvm=path, data_shape=(5,), batch_size=1, num_parts=2, part_index=p)
              for lab in b.label[0].asnumpy().tolist()] for p in range(2)]
    assert parts == [[1, 0], [2, 1, 3]]
    with pytest.raises(MXAsyncError, match="feature index 4"):
        LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=2)
