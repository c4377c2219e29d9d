"""gluon.data datasets and samplers (MXNet 1.9 semantics), and the vision readers on small files
written here in MXNet's formats (MNIST idx, CIFAR binary, RecordIO, image folders)."""

from __future__ import annotations

import gzip
import pickle
import struct

import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon import data as gdata
from mxasync.gluon.data import vision


# -- samplers ------------------------------------------------------------------------------------------
def test_sequential_and_random_sampler():
    assert list(gdata.SequentialSampler(5)) == [0, 1, 2, 3, 4]
    assert list(gdata.SequentialSampler(3, start=4)) == [4, 5, 6]
    np.random.seed(0)
    r = list(gdata.RandomSampler(10))
    assert sorted(r) == list(range(10)) and r != list(range(10))
    assert len(gdata.RandomSampler(7)) == 7


@pytest.mark.parametrize("last_batch, expected, length", [
    ("keep", [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]], 4),
    ("discard", [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 3),
    ("rollover", [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 3),
])
def test_batch_sampler(last_batch, expected, length):
    s = gdata.BatchSampler(gdata.SequentialSampler(10), 3, last_batch)
    assert len(s) == length
    assert list(s) == expected


def test_batch_sampler_rollover_carries_the_rest():
    s = gdata.BatchSampler(gdata.SequentialSampler(10), 4, "rollover")
    assert list(s) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(s) == 3  # (2 left over + 10) // 4
    assert list(s) == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert list(s) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batch_sampler_bad_last_batch():
    with pytest.raises(ValueError, match="last_batch"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 2, "pad")


def test_interval_and_filter_sampler():
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(gdata.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    assert len(gdata.IntervalSampler(7, 3, rollover=False)) == 3
    f = gdata.FilterSampler(lambda x: x > 2, [5, 1, 3, 0])
    assert list(f) == [0, 2] and len(f) == 2


# -- datasets ----------------------------------------------------------------------------------------
def test_simple_dataset_ops():
    ds = gdata.SimpleDataset(list(range(10)))
    assert [ds.transform(lambda x: x + 1)[i] for i in (0, 9)] == [1, 10]
    assert list(ds.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert list(ds.take(3)) == [0, 1, 2] and len(ds.take(None)) == 10 and len(ds.take(50)) == 10
    shards = [list(ds.shard(3, i)) for i in range(3)]
    assert shards == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(ds.sample(gdata.SequentialSampler(2, 5))) == [5, 6]
    with pytest.raises(TypeError, match="Sampler"):
        ds.sample([1, 2])
    with pytest.raises(ValueError):
        ds.shard(2, 2)


def test_transform_first_and_eager_transform():
    ds = gdata.ArrayDataset([1, 2, 3], ["a", "b", "c"])
    assert ds.transform_first(lambda x: x * 10)[1] == (20, "b")
    assert ds.transform(lambda x, y: y + str(x))[2] == "c3"
    calls = []

    def fn(x, y):
        calls.append(x)
        return x

    eager = ds.transform(fn, lazy=False)
    assert calls == [1, 2, 3] and eager[0] == 1 and calls == [1, 2, 3]
    # the closure of transform_first pickles (process workers need it)
    assert pickle.loads(pickle.dumps(ds.transform_first(abs)))[0] == (1, "a")


def test_array_dataset():
    x = np.arange(12).reshape(6, 2)
    y = mx.nd.arange(6)
    ds = gdata.ArrayDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8, 9] and isinstance(b, np.floating) and b == 4  # 1-D NDArray read as numpy
    one = gdata.ArrayDataset(mx.nd.ones((3, 2)))
    assert isinstance(one[0], mx.nd.NDArray) and one[0].shape == (2,)
    with pytest.raises(ValueError, match="same length"):
        gdata.ArrayDataset(np.zeros(3), np.zeros(4))


def test_record_file_dataset(tmp_path):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(5):
        w.write_idx(i, b"record-%d" % i)
    w.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 5 and ds[3] == b"record-3"
    assert pickle.loads(pickle.dumps(ds))[4] == b"record-4"
    with pytest.raises(FileNotFoundError, match="nope.rec"):
        gdata.RecordFileDataset(str(tmp_path / "nope.rec"))


# -- vision datasets on files in MXNet's formats ------------------------------------------------------
def _write_idx(path, arr: np.ndarray):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", 0x800 + arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape))
        f.write(arr.astype(np.uint8).tobytes())


@pytest.mark.parametrize("cls, folder", [(vision.MNIST, "mnist"), (vision.FashionMNIST, "fashion-mnist")])
def test_mnist_reader(tmp_path, cls, folder):
    rng = np.random.RandomState(0)
    imgs = rng.randint(0, 256, size=(5, 28, 28))
    labels = np.array([3, 1, 4, 1, 5])
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", imgs)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels)
    ds = cls(root=str(tmp_path), train=False)
    assert len(ds) == 5
    img, label = ds[2]
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8 and label == 4 and label.dtype == np.int32
    np.testing.assert_array_equal(img.asnumpy()[..., 0], imgs[2])
    with pytest.raises(FileNotFoundError, match="train-labels-idx1-ubyte.gz"):
        cls(root=str(tmp_path), train=True)
    ds = cls(root=str(tmp_path), train=False, transform=lambda d, lab: (d.astype("float32") / 255, lab + 1))
    assert ds[0][1] == 4 and ds[0][0].dtype == np.float32


def test_mnist_default_root_uses_mxnet_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "datasets" / "mnist")):
        vision.MNIST()


def _cifar_rows(n, label_bytes, rng):
    labels = rng.randint(0, 10, size=(n, label_bytes))
    pixels = rng.randint(0, 256, size=(n, 3072))
    return np.concatenate([labels, pixels], axis=1).astype(np.uint8)


def test_cifar10_reader(tmp_path):
    rng = np.random.RandomState(1)
    rows = [_cifar_rows(2, 1, rng) for _ in range(5)]
    for i, r in enumerate(rows, 1):
        r.tofile(tmp_path / f"data_batch_{i}.bin")
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    img, label = ds[3]  # second row of data_batch_2
    assert img.shape == (32, 32, 3) and label == rows[1][1, 0]
    np.testing.assert_array_equal(img.asnumpy(), rows[1][1, 1:].reshape(3, 32, 32).transpose(1, 2, 0))
    with pytest.raises(FileNotFoundError, match="test_batch.bin"):
        vision.CIFAR10(root=str(tmp_path), train=False)


def test_cifar100_reader(tmp_path):
    rows = _cifar_rows(3, 2, np.random.RandomState(2))
    rows.tofile(tmp_path / "test.bin")
    coarse = vision.CIFAR100(root=str(tmp_path), train=False)
    fine = vision.CIFAR100(root=str(tmp_path), train=False, fine_label=True)
    assert [coarse[i][1] for i in range(3)] == rows[:, 0].tolist()
    assert [fine[i][1] for i in range(3)] == rows[:, 1].tolist()
    np.testing.assert_array_equal(fine[2][0].asnumpy(), rows[2, 2:].reshape(3, 32, 32).transpose(1, 2, 0))


def test_cifar_truncated_file(tmp_path):
    np.zeros(100, np.uint8).tofile(tmp_path / "test_batch.bin")
    with pytest.raises(ValueError, match="3073-byte record"):
        vision.CIFAR10(root=str(tmp_path), train=False)


def _encode_png(img: np.ndarray) -> bytes:
    # a plain RGB PNG written with zlib (no image library needed)
    import zlib
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_image_folder_dataset(tmp_path):
    rng = np.random.RandomState(3)
    imgs = {}
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for j in range(2):
            img = rng.randint(0, 256, size=(4, 5, 3)).astype(np.uint8)
            (tmp_path / cls / f"{j}.png").write_bytes(_encode_png(img))
            imgs[(cls, j)] = img
    (tmp_path / "dog" / "notes.txt").write_text("skip me")
    (tmp_path / "README").write_text("not a class")
    with pytest.warns(UserWarning):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 4
    img, label = ds[3]
    assert label == 1 and img.shape == (4, 5, 3)
    np.testing.assert_array_equal(img.asnumpy(), imgs[("dog", 1)])
    with pytest.warns(UserWarning):
        grey = vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert grey.shape == (4, 5, 1)


def test_image_record_dataset(tmp_path):
    rec, idx = str(tmp_path / "i.rec"), str(tmp_path / "i.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    rng = np.random.RandomState(4)
    imgs = [rng.randint(0, 256, size=(3, 4, 3)).astype(np.uint8) for _ in range(3)]
    for i, img in enumerate(imgs):
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i * 2), i, 0), _encode_png(img)))
    w.close()
    ds = vision.ImageRecordDataset(rec)
    assert len(ds) == 3
    img, label = ds[2]
    assert label == 4.0
    np.testing.assert_array_equal(img.asnumpy(), imgs[2])
    ds = vision.ImageRecordDataset(rec, transform=lambda d, lab: (d.shape, lab))
    assert ds[1] == ((3, 4, 3), 2.0)


def test_vision_datasets_hand_out_mx_np_arrays_under_np_array(tmp_path):
    # MXNet 1.9.1 under npx.set_np(): images and labels are mx.np arrays (d2l's FashionMNIST feeds
    # them through ToTensor and DataLoader and calls .as_in_ctx on the batches)
    imgs = np.random.RandomState(0).randint(0, 256, size=(4, 28, 28))
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", imgs)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.array([3, 1, 4, 1]))
    _cifar_rows(2, 1, np.random.RandomState(1)).tofile(tmp_path / "test_batch.bin")
    assert type(vision.FashionMNIST(root=str(tmp_path), train=False)[0][0]) is mx.nd.NDArray
    with mx.util.np_array(True):
        fm = vision.FashionMNIST(root=str(tmp_path), train=False)
        cifar = vision.CIFAR10(root=str(tmp_path), train=False)
        loader = gdata.DataLoader(fm.transform_first(vision.transforms.ToTensor()), batch_size=4)
        x, y = next(iter(loader))
    for ds in (fm, cifar):
        img, label = ds[1]
        assert isinstance(img, mx.np.ndarray) and isinstance(label, mx.np.ndarray) and label.dtype == np.int32
    assert fm[2][1].item() == 4
    assert isinstance(x, mx.np.ndarray) and x.shape == (4, 1, 28, 28) and x.dtype == np.float32
    np.testing.assert_allclose(x.asnumpy()[:, 0], imgs / 255.0, rtol=1e-6)
    assert isinstance(y, mx.np.ndarray) and y.asnumpy().tolist() == [3, 1, 4, 1]
