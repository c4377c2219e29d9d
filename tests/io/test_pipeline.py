"""RecordImagePipeline tests: batch shapes, labels, round_batch/pad, partitions, shuffle, seeds, errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io.image import RecordImagePipeline
from mxasync.io.recordio import IRHeader, MXIndexedRecordIO, MXRecordIO, pack, pack_img

pytest.importorskip("PIL")

N = 23


def image(i: int) -> np.ndarray:
    """An image that says which record it is: blue channel == i (stored BGR), varied sizes."""
    h, w = (12, 16) if i % 2 else (16, 12)
    img = np.zeros((h, w, 3), np.uint8)
    img[..., 0] = i
    img[..., 1] = np.arange(w)[None, :] * 10
    img[..., 2] = np.arange(h)[:, None] * 10
    return img


def write_rec(folder, n=N, label=lambda i: float(i), bad=(), fmt=".png", name="data"):
    rec, idx = os.path.join(folder, name + ".rec"), os.path.join(folder, name + ".idx")
    with MXIndexedRecordIO(idx, rec, "w") as w:
        for i in range(n):
            header = IRHeader(0, label(i), i, 0)
            w.write_idx(i, pack(header, b"garbage") if i in bad else pack_img(header, image(i), img_fmt=fmt))
    return rec, idx


@pytest.fixture
def rec(tmp_path):
    return write_rec(str(tmp_path))


def collect(pipe, epochs=1):
    out = []
    for ep in range(epochs):
        if ep:
            pipe.reset()
        out.append([(b.data.copy(), b.label.copy(), b.pad) for b in pipe])
    return out


def ids(batch_data):
    """Record numbers from the blue channel (data is RGB, so blue is channel 2)."""
    return batch_data[:, 2, 0, 0].astype(int).tolist()


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
@pytest.mark.parametrize("threads", [0, 1, 3])
def test_shapes_labels_and_round_batch(rec, dtype, threads):
    path, idx = rec
    with RecordImagePipeline(path, (3, 8, 8), 5, path_imgidx=idx, dtype=dtype, preprocess_threads=threads) as p:
        (epoch0, epoch1) = collect(p, 2)
    assert [b[0].shape for b in epoch0] == [(5, 3, 8, 8)] * 5
    assert all(b[0].dtype == np.dtype(dtype) and b[1].shape == (5,) for b in epoch0)
    labels = [int(v) for b in epoch0 for v in b[1]]
    assert labels == list(range(N)) + [0, 1]  # the last batch is completed from the next epoch
    assert [b[2] for b in epoch0] == [0, 0, 0, 0, 2]
    assert [ids(b[0]) for b in epoch0] == [[int(v) for v in b[1]] for b in epoch0]
    # MXNet's round robin: the next epoch starts after the two borrowed records
    assert [int(v) for b in epoch1 for v in b[1]][:5] == [2, 3, 4, 5, 6]


def test_no_round_batch_pads_with_zeros(rec):
    path, _ = rec
    with RecordImagePipeline(path, (3, 8, 8), 5, round_batch=False, preprocess_threads=2) as p:
        (epoch0, epoch1) = collect(p, 2)
    last = epoch0[-1]
    assert last[2] == 2 and last[1].tolist() == [20, 21, 22, 0, 0]
    assert (last[0][3:] == 0).all()
    assert [int(v) for b in epoch1 for v in b[1]][:5] == [0, 1, 2, 3, 4]


def test_small_partition_smaller_than_batch(rec):
    path, idx = rec
    with RecordImagePipeline(path, (3, 4, 4), 8, num_parts=8, part_index=7, path_imgidx=idx) as p:
        (batch,) = collect(p)[0]
    assert p.num_records == 3 and batch[2] == 5
    assert batch[1].tolist() == [20, 21, 22, 20, 21, 22, 20, 21]


@pytest.mark.parametrize("num_parts", [1, 2, 3, 4, 7, 23, 30])
def test_partitions_disjoint_and_complete(rec, num_parts):
    path, idx = rec
    seen = []
    for part in range(num_parts):
        with RecordImagePipeline(path, (3, 4, 4), 4, num_parts=num_parts, part_index=part,
                                 path_imgidx=idx if part % 2 else None, round_batch=False) as p:
            got = [int(v) for b in p for v in b.label[: len(b.label) - b.pad]]
            assert got == sorted(got)  # contiguous runs of records
            seen += got
    assert sorted(seen) == list(range(N)) and len(seen) == N


def test_offsets_from_idx_and_scan_agree(rec):
    path, idx = rec
    with RecordImagePipeline(path, (3, 4, 4), 4, path_imgidx=idx) as a, RecordImagePipeline(path, (3, 4, 4), 4) as b:
        assert a.offsets == b.offsets and len(a.offsets) == N


def test_shuffle_is_seeded_and_complete(rec):
    path, idx = rec

    def orders(seed):
        with RecordImagePipeline(path, (3, 4, 4), 23, path_imgidx=idx, shuffle=True, seed=seed) as p:
            return [[int(v) for v in b[1]] for epoch in collect(p, 3) for b in epoch]

    first = orders(1)
    assert first == orders(1)
    assert first != orders(2)
    assert all(sorted(o) == list(range(N)) for o in first)
    assert first[0] != first[1]  # a new permutation each epoch
    assert first[0] != list(range(N))


AUG = {"rand_crop": True, "rand_mirror": True, "brightness": 0.3, "contrast": 0.3, "saturation": 0.3,
       "random_resized_crop": False, "resize": 10}


def test_seed_aug_reproducible_and_thread_independent(rec):
    path, _ = rec

    def run(seed_aug, threads):
        with RecordImagePipeline(path, (3, 6, 6), 5, seed_aug=seed_aug, preprocess_threads=threads, **AUG) as p:
            return np.concatenate([b[0] for epoch in collect(p, 2) for b in epoch])

    a = run(7, 3)
    np.testing.assert_array_equal(a, run(7, 0))
    assert not np.array_equal(a, run(8, 3))
    assert not np.array_equal(run(None, 2), run(None, 2))
    epochs = a.reshape(2, -1, 3, 6, 6)
    assert not np.array_equal(epochs[0][:10], epochs[1][:10])  # each epoch augments anew


def test_vector_labels(tmp_path):
    path, _ = write_rec(str(tmp_path), n=6, label=lambda i: [i, 10 * i, -i])
    with RecordImagePipeline(path, (3, 4, 4), 4, label_width=3) as p:
        batch = next(p)
    assert batch.label.shape == (4, 3)
    assert batch.label[2].tolist() == [2, 20, -2]
    with RecordImagePipeline(path, (3, 4, 4), 4, label_width=2) as p:
        with pytest.raises(MXAsyncError, match="has 3 labels but label_width is 2"):
            next(p)
    one, _ = write_rec(str(tmp_path), n=3, label=lambda i: [i], name="one")
    with RecordImagePipeline(one, (3, 4, 4), 3) as p:
        assert next(p).label.tolist() == [0, 1, 2]
    scalar, _ = write_rec(str(tmp_path), n=3, name="scalar")
    with RecordImagePipeline(scalar, (3, 4, 4), 3, label_width=2) as p:
        with pytest.raises(MXAsyncError, match="scalar label but label_width is 2"):
            next(p)


def test_normalization_and_gray(rec):
    path, _ = rec
    mean, std = [10, 20, 30], [2, 4, 5]
    with RecordImagePipeline(path, (3, 8, 8), 5) as raw, \
            RecordImagePipeline(path, (3, 8, 8), 5, mean=mean, std=std, scale=0.5) as norm:
        r, n = next(raw).data, next(norm).data
    expected = (r - np.array(mean, np.float32)[:, None, None]) * 0.5 / np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(n, expected, rtol=1e-6)
    with RecordImagePipeline(path, (1, 8, 8), 5) as gray:
        g = next(gray).data
    assert g.shape == (5, 1, 8, 8)
    luma = 0.299 * r[:, 0] + 0.587 * r[:, 1] + 0.114 * r[:, 2]
    assert np.abs(g[:, 0] - luma).max() <= 1.5
    with RecordImagePipeline(path, (4, 8, 8), 5) as rgba:
        a = next(rgba).data
    assert a.shape == (5, 4, 8, 8) and (a[:, 3] == 255).all()
    np.testing.assert_array_equal(a[:, :3], r)


@pytest.mark.parametrize(("kwargs", "msg"), [
    ({"data_shape": (3, 8)}, "data_shape"),
    ({"data_shape": (2, 8, 8)}, "data_shape"),
    ({"data_shape": (3, 0, 8)}, "data_shape"),
    ({"batch_size": 0}, "batch_size"),
    ({"num_parts": 2, "part_index": 2}, "part_index"),
    ({"dtype": "float16"}, "dtype"),
    ({"dtype": "uint8", "mean": [1, 2, 3]}, "float32"),
    ({"rand_crop": True, "no_such_option": 1}, "no_such_option"),
    ({"inter_method": 42}, "inter_method"),
])
def test_bad_arguments(rec, kwargs, msg):
    path, _ = rec
    args = {"data_shape": (3, 8, 8), "batch_size": 4, **kwargs}
    with pytest.raises(MXAsyncError, match=msg):
        RecordImagePipeline(path, **args)


def test_bad_image_raises_when_batch_is_produced(tmp_path):
    path, _ = write_rec(str(tmp_path), n=10, bad={6})
    for threads in (0, 2):
        with RecordImagePipeline(path, (3, 4, 4), 4, preprocess_threads=threads) as p:
            assert next(p).label.tolist() == [0, 1, 2, 3]
            with pytest.raises(MXAsyncError, match=r"data\.rec: record 6 at byte offset \d+: cannot decode"):
                next(p)


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(MXAsyncError, match="cannot open"):
        RecordImagePipeline(str(tmp_path / "none.rec"), (3, 4, 4), 2)
    path, _ = write_rec(str(tmp_path), n=3)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 3)
    with pytest.raises(MXAsyncError, match="truncated"):
        RecordImagePipeline(path, (3, 4, 4), 2)


def test_empty_file_and_reset_mid_epoch(tmp_path, rec):
    empty = str(tmp_path / "empty.rec")
    MXRecordIO(empty, "w").close()
    with RecordImagePipeline(empty, (3, 4, 4), 2) as p:
        assert list(p) == []
    path, _ = rec
    with RecordImagePipeline(path, (3, 4, 4), 5, prefetch_buffer=2) as p:
        p.reset()  # a reset before any batch changes nothing
        assert next(p).label.tolist() == [0, 1, 2, 3, 4]
        p.reset()
        assert next(p).label.tolist() == [0, 1, 2, 3, 4]
        assert p.next().label.tolist() == [5, 6, 7, 8, 9]


def test_jpeg_records(tmp_path):
    path, _ = write_rec(str(tmp_path), n=4, fmt=".jpg")
    with RecordImagePipeline(path, (3, 10, 10), 4, resize=12, rand_crop=True, seed_aug=1) as p:
        batch = next(p)
    assert batch.data.shape == (4, 3, 10, 10)
    assert np.abs(batch.data[:, 2].mean(axis=(1, 2)) - np.arange(4)).max() < 3
