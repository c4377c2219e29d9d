"""mx.image.ImageDetIter and the detection augmenters: with Python's and NumPy's random seeded alike, the
crops, pads and flips give MXNet 1.9.1's labels (recorded from MXNet for the same images and seeds) and,
within resize rounding, its pixels."""

import random

import numpy as np
import pytest

import mxasync as mx

PIL = pytest.importorskip("PIL.Image")

# MXNet 1.9.1's labels (rounded to 4 places) and data means for the script below, batch by batch
MXNET_BATCHES = [
    ([[[0.0, 0.1, 0.2, 0.6, 0.7], [-1] * 5], [[1.0, 0.4828, 0.3385, 1.0, 1.0], [1.0, 0.0, 0.1692, 1.0, 0.8462]]],
     0, 124.83),
    ([[[2.0, 0.0444, 0.15, 0.6, 0.6955], [-1] * 5],
      [[0.0, 0.3529, 0.1576, 0.8431, 0.5515], [1.0, 0.0588, 0.0788, 0.6471, 0.3939]]], 0, 126.17),
    ([[[1.0, 0.3194, 0.229, 0.6667, 0.6806], [-1] * 5], [[0.0, 0.0962, 0.3594, 0.5769, 0.6719], [-1] * 5]], 1, 126.7),
]


@pytest.fixture
def det_lst(tmp_path):
    rs = np.random.RandomState(0)
    lines = []
    for i in range(5):
        PIL.fromarray((rs.rand(40 + 4 * i, 50, 3) * 255).astype(np.uint8)).save(tmp_path / f"img{i}.png")
        objs = [[i % 3, 0.1, 0.2, 0.6, 0.7], [1, 0.3, 0.1, 0.9, 0.5]][: 1 + i % 2]
        label = [2, 5] + [v for o in objs for v in o]
        lines.append("\t".join([str(i)] + [str(v) for v in label] + [f"img{i}.png"]))
    (tmp_path / "det.lst").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_image_det_iter_crops_pads_and_flips_as_mxnet(det_lst):
    random.seed(3)
    np.random.seed(3)
    it = mx.image.ImageDetIter(2, (3, 32, 32), path_imglist=str(det_lst / "det.lst"), path_root=str(det_lst),
                               rand_crop=0.5, rand_pad=0.5, rand_mirror=True, area_range=(0.3, 2.0))
    assert it.provide_label[0].shape == (2, 2, 5) and it.label_shape == (2, 5)
    batches = list(it)
    assert len(batches) == len(MXNET_BATCHES)
    for batch, (label, pad, mean) in zip(batches, MXNET_BATCHES, strict=True):
        np.testing.assert_allclose(batch.label[0].asnumpy(), label, atol=1e-4)
        assert batch.pad == pad and batch.data[0].shape == (2, 3, 32, 32)
        assert abs(float(batch.data[0].asnumpy().mean()) - mean) < 0.05


def test_augmenters_move_boxes_with_the_image():
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6]], np.float32)
    img = mx.nd.array(np.zeros((10, 20, 3)), dtype="uint8")
    out, flipped = mx.image.DetHorizontalFlipAug(1.0)(img, label.copy())
    np.testing.assert_allclose(flipped, [[0, 0.5, 0.2, 0.9, 0.6]], atol=1e-6)
    padded = mx.image.DetRandomPadAug(area_range=(1.5, 2.0), pad_val=(1, 2, 3))
    random.seed(0)
    big, moved = padded(img, label.copy())
    h, w = big.shape[:2]
    assert h > 10 and w > 20 and (moved[:, 3] - moved[:, 1])[0] == pytest.approx(0.4 * 20 / w, rel=1e-5)
    crop = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], skip_prob=0)
    assert len(crop.aug_list) == 2 and all(isinstance(a, mx.image.DetRandomCropAug) for a in crop.aug_list)
    augs = mx.image.CreateDetAugmenter((3, 8, 8), rand_crop=1, rand_pad=1, rand_mirror=True, mean=True, std=True)
    assert [type(a).__name__ for a in augs] == ["DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomSelectAug",
                                                "DetBorrowAug", "DetBorrowAug", "DetBorrowAug"]


def test_image_det_record_iter_gives_mxnets_label_rows(det_lst, tmp_path):
    """MXNet 1.9.1's rows for the same records: [C, H, W, label length], the label, -1 padding; the last batch
    completed from the start (round_batch); data means as MXNet's."""
    from mxasync.io.recordio import IRHeader, MXRecordIO, pack

    with MXRecordIO(str(tmp_path / "det.rec"), "w") as rec:
        for i, line in enumerate((det_lst / "det.lst").read_text().splitlines()):
            fields = line.split("\t")
            label = np.array([float(v) for v in fields[1:-1]], np.float32)
            rec.write(pack(IRHeader(0, label, i, 0), (det_lst / fields[-1]).read_bytes()))
    it = mx.io.ImageDetRecordIter(path_imgrec=str(tmp_path / "det.rec"), batch_size=2, data_shape=(3, 32, 32),
                                  label_pad_width=20)
    assert it.provide_label[0].shape == (2, 24)
    batches = list(it)
    one = [2, 5, 0, 0.1, 0.2, 0.6, 0.7]
    rows = batches[0].label[0].asnumpy()
    np.testing.assert_allclose(rows[0], [3, 32, 32, 7] + one + [-1] * 13, atol=1e-6)
    np.testing.assert_allclose(rows[1], [3, 32, 32, 12, 2, 5, 1, 0.1, 0.2, 0.6, 0.7, 1, 0.3, 0.1, 0.9, 0.5] + [-1] * 8,
                               atol=1e-6)
    assert [b.pad for b in batches] == [0, 0, 1]
    np.testing.assert_allclose(batches[2].label[0].asnumpy()[1, :11], [3, 32, 32, 7] + one, atol=1e-6)
    for batch, mean in zip(batches, (125.46, 126.62, 126.15), strict=True):
        assert abs(float(batch.data[0].asnumpy().mean()) - mean) < 0.01
    auto = mx.io.ImageDetRecordIter(path_imgrec=str(tmp_path / "det.rec"), batch_size=3, data_shape=(3, 32, 32))
    assert auto.provide_label[0].shape == (3, 16)
    with pytest.warns(UserWarning, match="rand_crop_prob are not implemented"):
        mx.io.ImageDetRecordIter(path_imgrec=str(tmp_path / "det.rec"), batch_size=3, data_shape=(3, 32, 32),
                                 rand_crop_prob=0.5)
