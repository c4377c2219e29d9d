"""ImageRecordIter's augmentation options and side inputs: rotation, shear, scale, aspect ratio,
crop sizes, PCA lighting, HSL jitter, ``mean_img``, ``path_imglist``; checked for their effect,
bounds and seeded reproducibility, and against the real MXNet 1.9.1 where outputs must match."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io import ImageRecordIter
from mxasync.io.image import RecordImagePipeline, codec
from mxasync.io.image import color as C
from mxasync.io.image import geometry as G
from mxasync.io.image.augment import ImageAugmenter
from mxasync.io.image.pipeline import write_chw
from mxasync.io.image.sources import load_mean_img, save_mean_img
from mxasync.io.recordio import IRHeader, MXIndexedRecordIO, pack_img

pytest.importorskip("PIL")
HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_PYTHON = os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python")
IMG = np.random.default_rng(5).integers(0, 256, (24, 20, 3), dtype=np.uint8)


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture(params=["opencv", "numpy"])
def backend(request):
    """Run with OpenCV, and with the numpy fallbacks (OpenCV switched off)."""
    if request.param == "opencv":
        pytest.importorskip("cv2")
        yield "opencv"
    else:
        codec.set_codecs(["simplejpeg", "pillow"])
        yield "numpy"
        codec.set_codecs(None)


def _write_noise_rec(folder) -> tuple[str, str]:
    """Eight PNG records of noise (24x20 and 20x24), ids 100.., labels i, and an index."""
    path, idx = str(folder / "n.rec"), str(folder / "n.idx")
    noise = np.random.default_rng(0)
    with MXIndexedRecordIO(idx, path, "w") as w:
        for i in range(8):
            shape = (24, 20, 3) if i % 2 else (20, 24, 3)
            w.write_idx(i, pack_img(IRHeader(0, float(i), 100 + i, 0), noise.integers(0, 256, shape, np.uint8),
                                    img_fmt=".png"))
    return path, idx


@pytest.fixture
def rec(tmp_path):
    return _write_noise_rec(tmp_path)


# -- geometry ------------------------------------------------------------------------------------

def test_rotate_90_is_a_rotation_centred_like_mxnet(backend):
    out = G.random_affine(IMG, rng(), rotate=90)
    assert out.shape == IMG.shape  # same canvas; MXNet centres the rotated content with offsets (-2, 22)
    rotated = np.rot90(IMG)  # counter-clockwise: output row r is source column W - 1 - r
    np.testing.assert_array_equal(out[3:23], rotated[:, 2:22])
    assert (out[:3] == 255).all() and (out[23:] == 255).all()


@pytest.mark.parametrize("kwargs", [{"max_rotate_angle": 0}, {"min_random_scale": 1.0, "max_random_scale": 1.0},
                                    {"aspect_ratio": (1.0, 1.0)}, {"rotate": 360}, {"max_shear_ratio": 0.0}])
def test_identity_settings_return_the_image(kwargs, backend):
    np.testing.assert_array_equal(G.random_affine(IMG, rng(3), **kwargs), IMG)


@pytest.mark.parametrize(("lo", "hi"), [(0.5, 0.5), (1.5, 2.0), (0.7, 1.3)])
def test_random_scale_sizes(lo, hi, backend):
    for seed in range(5):
        out = G.random_affine(IMG, rng(seed), min_random_scale=lo, max_random_scale=hi, fill_value=0)
        s = out.shape[1] / 20
        assert lo - 0.05 <= s <= hi + 0.05 and abs(out.shape[0] / 24 - s) < 0.05
    bounded = G.random_affine(IMG, rng(), min_random_scale=3, max_random_scale=3, max_img_size=30, min_img_size=0)
    assert bounded.shape == (30, 30, 3)


def test_scale_up_of_a_constant_image_keeps_its_value(backend):
    flat = np.full((10, 12, 3), 77, np.uint8)
    out = G.random_affine(flat, rng(), min_random_scale=2, max_random_scale=2, fill_value=0)
    assert out.shape == (20, 24, 3)
    assert (out[2:-2, 2:-2] == 77).all()  # the interior; the last rows/columns blend with the border


def test_rotation_and_shear_bounds(backend):
    flat = np.full((31, 31, 1), 100, np.uint8)
    for seed in range(10):
        r = rng(seed)
        r.uniform(-1, 1)  # random_affine draws the shear first, then the angle
        angle = int(r.integers(-30, 31))
        out = G.random_affine(flat, rng(seed), max_rotate_angle=30, fill_value=0)
        assert out.shape == flat.shape and out[15, 15, 0] == 100  # a rotated square still covers the centre
        assert (out[0, 0, 0] == 0) == (abs(angle) >= 3), angle  # and uncovers the corners
    for seed in range(5):
        shear = 0.5 * rng(seed).uniform(-1, 1)
        out = G.random_affine(flat, rng(seed), max_shear_ratio=0.5, fill_value=0)
        assert out[15, 15, 0] == 100  # (x, y) -> (x + m y, y) shifts the top row by about -15.5 m
        assert (out[0, [0, -1], 0] == 0).any() == (abs(shear) >= 0.1), shear


def test_aspect_ratio_stretches():
    img = np.zeros((40, 40, 1), np.uint8)
    img[10:30, 10:30] = 200
    out = G.random_affine(img, rng(), aspect_ratio=(2.0, 2.0), fill_value=0, interp=0)
    rows, cols = np.nonzero(out[:, :, 0] == 200)
    # x scaled by 2/3 and y by 4/3 (MXNet's parametrisation), the canvas unchanged
    assert out.shape == img.shape and abs((np.ptp(cols) + 1) - 20 * 2 / 3) <= 1 and abs((np.ptp(rows) + 1) - 20 * 4 / 3) <= 1


def test_numpy_warp_close_to_opencv():
    pytest.importorskip("cv2")
    smooth = np.clip(np.add.outer(np.arange(24) * 8, np.arange(20) * 5), 0, 255).astype(np.uint8)[:, :, None]
    smooth = np.repeat(smooth, 3, axis=2)
    m = G.affine_matrix(23, 0.1, 1.2, 0.9, (20, 24), (24, 29))
    ours = G._warp_numpy(smooth, m, (24, 29), 1, 255).astype(int)
    cv = G.warp_affine(smooth, m, (24, 29), 1, 255).astype(int)
    inner = np.abs(ours - cv)[3:-3, 3:-3]
    assert np.median(inner) <= 1 and inner.max() <= 16


def test_random_size_crop():
    img = np.arange(30 * 40, dtype=np.float32).reshape(30, 40, 1)
    sides = set()
    for seed in range(20):
        out = G.random_size_crop(img, (10, 10), rng(seed), 12, 20, rand_crop=True, interp=0)
        assert out.shape == (10, 10, 1)
        sides.add(int(round((out[0, -1, 0] - out[0, 0, 0]) * 10 / 9)))
    assert len(sides) > 3 and min(sides) >= 11 and max(sides) <= 21
    centred = G.random_size_crop(img, (8, 8), rng(), 8, 8, rand_crop=False)
    np.testing.assert_array_equal(centred, img[11:19, 16:24])
    assert G.random_size_crop(img, (5, 5), rng(), 50, 60, rand_crop=False).shape == (5, 5, 1)  # clamped


# -- colour ----------------------------------------------------------------------------------------

def test_pca_lighting_shift_is_in_the_eigen_span():
    flat = np.full((4, 4, 3), 100, np.uint8)
    for seed in range(5):
        out = C.pca_lighting(flat, 0.5, rng(seed))
        shift = out[0, 0] - 100
        assert np.ptp(out.reshape(-1, 3), axis=0).max() == 0
        alpha = rng(seed).normal(0, 0.5, 3)
        np.testing.assert_allclose(shift, C.PCA_EIGVEC @ (alpha * C.PCA_EIGVAL), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(C.pca_lighting(flat, 0.0, rng()), flat)


def test_hsl_round_trip_and_shifts(backend):
    pixels = np.random.default_rng(1).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    np.testing.assert_array_equal(C.hsl_jitter(pixels, rng(), 0, 0, 0)[..., :3].astype(int),
                                  C.hsl_jitter(pixels, rng(), 0, 0, 0)[..., :3].astype(int))
    loss = np.abs(C.hsl_jitter(pixels, rng(), 0, 0, 0).astype(int) - pixels)  # 8-bit HLS loses a little
    assert loss.mean() < 1 and loss.max() <= 8
    gray = np.full((3, 3, 3), 120, np.uint8)
    for seed in range(5):
        out = C.hsl_jitter(gray, rng(seed), 0, 0, 40)  # L shift of a gray pixel: all channels move together
        dl = int(rng(seed).uniform(-1, 1, 3)[2] * 40)  # the draws are h, s, l
        assert abs(int(out[0, 0, 0]) - (120 + dl)) <= 1 and np.ptp(out) == 0
    orange = np.zeros((2, 2, 3), np.uint8) + np.array([150, 100, 50], np.uint8)
    hue = C.hsl_jitter(orange, rng(2), 20, 0, 0).astype(int)
    assert hue[0, 0, 0] == 150 and hue[0, 0, 2] == 50  # a hue shift inside one sector moves only G


def test_rgb_hls_numpy_matches_opencv():
    cv2 = pytest.importorskip("cv2")
    pixels = np.random.default_rng(2).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    hls = cv2.cvtColor(pixels, cv2.COLOR_RGB2HLS)
    assert np.abs(C.rgb_to_hls(pixels).astype(int) - hls).max() <= 1
    assert np.abs(C.hls_to_rgb(hls).astype(int) - cv2.cvtColor(hls, cv2.COLOR_HLS2RGB)).max() <= 1


# -- the augmenter and the pipeline ---------------------------------------------------------------

ALL = {"max_rotate_angle": 20, "max_shear_ratio": 0.1, "min_random_scale": 0.8, "max_random_scale": 1.2,
       "max_aspect_ratio": 0.2, "rand_crop": True, "rand_mirror": True, "pca_noise": 0.1, "random_h": 10,
       "random_s": 10, "random_l": 10, "fill_value": 0, "inter_method": 10, "brightness": 0.1}


@pytest.mark.parametrize(("kwargs", "msg"), [
    ({"min_random_scale": 2.0}, "min_random_scale"), ({"min_crop_size": 4}, "go together"),
    ({"min_crop_size": 9, "max_crop_size": 8}, "go together"), ({"pca_noise": -1}, ">= 0"),
    ({"random_h": -2}, ">= 0"),
])
def test_new_options_are_validated(kwargs, msg):
    with pytest.raises(MXAsyncError, match=msg):
        ImageAugmenter(size=(8, 8), **kwargs)


def test_everything_on_is_seeded_and_thread_independent(rec):
    path, idx = rec

    def run(seed_aug, threads):
        with RecordImagePipeline(path, (3, 12, 12), 3, path_imgidx=idx, seed_aug=seed_aug,
                                 preprocess_threads=threads, **ALL) as p:
            return np.concatenate([b.data for b in p])

    a = run(3, 2)
    assert a.dtype == np.float32 and a.shape == (9, 3, 12, 12)
    np.testing.assert_array_equal(a, run(3, 0))
    assert not np.array_equal(a, run(4, 2))


def test_write_chw_matches_transpose(backend):
    big = np.random.default_rng(0).integers(0, 256, (30, 40, 3), dtype=np.uint8)
    for view in (big, big[3:20, 5:30], big[3:20, 30:5:-1], big[:, :, :1]):
        for dtype in (np.float32, np.uint8):
            dst = np.empty((view.shape[2],) + view.shape[:2], dtype)
            write_chw(dst, view)
            np.testing.assert_array_equal(dst, view.transpose(2, 0, 1))


def test_imglist_labels_by_record_id(rec, tmp_path):
    path, idx = rec
    lst = tmp_path / "n.lst"
    lst.write_text("".join(f"{100 + i}\t{7 * i}\t{-i}.5\tdir/{i}.png\n" for i in reversed(range(8))))
    with ImageRecordIter(path_imgrec=path, path_imgidx=idx, path_imglist=str(lst), data_shape=(3, 8, 8),
                         batch_size=4) as it:
        assert [b.label[0].asnumpy().tolist() for b in it] == [[0, 7, 14, 21], [28, 35, 42, 49]]
    with ImageRecordIter(path_imgrec=path, path_imglist=str(lst), data_shape=(3, 8, 8), batch_size=4,
                         label_width=2, shuffle=True) as it:
        labels = np.concatenate([b.label[0].asnumpy() for b in it])
    assert sorted(map(tuple, labels.tolist())) == [(7.0 * i, -i - 0.5 if i else 0.5) for i in range(8)]
    lst.write_text("100\t1\ta.png\n")
    with ImageRecordIter(path_imgrec=path, path_imglist=str(lst), data_shape=(3, 8, 8), batch_size=2) as it:
        with pytest.raises(MXAsyncError, match="id 101 is not in path_imglist"):
            it.next()
    lst.write_text("100\t1\n")
    with pytest.raises(MXAsyncError, match=r"n\.lst:1: expected index, 1 label"):
        ImageRecordIter(path_imgrec=path, path_imglist=str(lst), data_shape=(3, 8, 8), batch_size=2)


def test_mean_img_computed_saved_and_used(rec, tmp_path):
    path, idx = rec
    mean_file = str(tmp_path / "mean.bin")
    kwargs = {"path_imgrec": path, "path_imgidx": idx, "data_shape": (3, 8, 8), "batch_size": 4}
    with ImageRecordIter(**kwargs) as it:
        raw = np.concatenate([b.data[0].asnumpy() for b in it])
    with ImageRecordIter(mean_img=mean_file, mean_r=50, std_r=2, std_g=2, std_b=2, scale=0.5, **kwargs) as it:
        got = np.concatenate([b.data[0].asnumpy() for b in it])
    mean = load_mean_img(mean_file, (3, 8, 8))
    # as in MXNet: the file holds the mean of the normalised images, and replaces mean_r when subtracted
    std = np.array([2, 2, 2], np.float32)[:, None, None]
    np.testing.assert_allclose(mean, ((raw - [[[50]], [[0]], [[0]]]) * 0.5 / std).mean(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, (raw - mean) * 0.5 / std, rtol=1e-5, atol=1e-5)
    save_mean_img(mean_file, np.zeros((3, 4, 4)))
    with pytest.raises(MXAsyncError, match=r"shape \(3, 4, 4\) but data_shape is \(3, 8, 8\)"):
        ImageRecordIter(mean_img=mean_file, **kwargs)
    with pytest.raises(MXAsyncError, match="float32"):
        RecordImagePipeline(path, (3, 8, 8), 4, dtype="uint8", mean_img=mean_file)


def test_batches_are_independent_ndarrays(rec):
    path, _ = rec
    with ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=4, dtype="uint8") as it:
        first, second = (b.data[0] for b in it)
        before = second.asnumpy().copy()
        first[:] = 0  # writing into one batch leaves the next alone
        np.testing.assert_array_equal(second.asnumpy(), before)
        assert (first.asnumpy() == 0).all()


# -- against MXNet 1.9.1 ---------------------------------------------------------------------------

_MXNET_SCRIPT = """
import json, sys
import mxnet as mx
rec, cases = sys.argv[1], json.loads(sys.argv[2])
out = []
for kwargs in cases:  # two epochs each; a case may run twice (a mean image made, then used)
    it = mx.io.ImageRecordIter(path_imgrec=rec, verbose=False, **kwargs)
    epochs = []
    for epoch in range(2):
        if epoch:
            it.reset()
        epochs.append([{"data": b.data[0].asnumpy().tolist(), "label": b.label[0].asnumpy().tolist(),
                        "pad": int(b.pad)} for b in it])
    out.append(epochs)
json.dump(out, sys.stdout)
"""

DEGENERATE = [  # settings whose transform is the identity or exact on the pixel grid: outputs must be equal
    {"max_rotate_angle": 0, "max_shear_ratio": 0.0, "min_random_scale": 1.0, "max_random_scale": 1.0},
    {"min_aspect_ratio": 1.0, "max_aspect_ratio": 1.0},  # MXNet warps (by the identity) here
    {"rotate": 90, "fill_value": 3}, {"rotate": 360},
    {"min_crop_size": 12, "max_crop_size": 12, "pad": 2, "fill_value": 9},
    {"max_rotate_angle": 0, "min_random_scale": 1.0, "max_random_scale": 1.0, "mean_r": 4.0, "std_b": 2.0,
     "scale": 0.5},
]


@pytest.fixture(scope="module")
def mxnet_run(tmp_path_factory):
    """All the MXNet runs in one process (importing MXNet takes over a second): ``(folder, rec, idx, results)``."""
    if not os.path.exists(MXNET_PYTHON):
        pytest.skip(f"no MXNet 1.9.1 at {MXNET_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
    pytest.importorskip("cv2")
    folder = tmp_path_factory.mktemp("mxnet_options")
    path, idx = _write_noise_rec(folder)
    lst = folder / "n.lst"
    lst.write_text("".join(f"{100 + i}\t{3 * i}\t{i}\tx.png\n" for i in range(8)))
    cases = [{"data_shape": [3, 16, 16], "batch_size": 3, "path_imgidx": idx, **kw} for kw in DEGENERATE]
    mean_case = {"data_shape": [3, 16, 16], "batch_size": 4, "path_imglist": str(lst), "label_width": 2,
                 "scale": 0.25, "mean_g": 3.0, "std_b": 2.0, "mean_img": str(folder / "theirs.bin")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([MXNET_PYTHON, "-c", _MXNET_SCRIPT, path, json.dumps(cases + [mean_case, mean_case])],
                         capture_output=True, text=True, timeout=120, env=env)
    if out.returncode != 0:
        pytest.fail(f"MXNet failed:\n{out.stderr[-3000:]}")
    return folder, path, idx, cases, mean_case, json.loads(out.stdout)


def _ours(kwargs: dict, epochs: int = 2, **extra) -> list:
    with ImageRecordIter(preprocess_threads=1, **kwargs, **extra) as it:
        out = []
        for epoch in range(epochs):
            if epoch:
                it.reset()
            out.append([(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it])
    return out


def _assert_same(ours: list, theirs: list, rtol: float, atol: float) -> None:
    assert [len(e) for e in ours] == [len(e) for e in theirs]
    for our_epoch, their_epoch in zip(ours, theirs, strict=True):
        for (data, label, pad), b in zip(our_epoch, their_epoch, strict=True):
            assert label.tolist() == b["label"] and pad == b["pad"]
            np.testing.assert_allclose(data, np.asarray(b["data"], np.float32), rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", range(len(DEGENERATE)))
def test_degenerate_settings_match_mxnet(mxnet_run, case):
    _, path, _, cases, _, results = mxnet_run
    _assert_same(_ours(cases[case], path_imgrec=path), results[case], rtol=1e-6, atol=1e-5)


def test_mean_img_and_imglist_match_mxnet(mxnet_run):
    folder, path, _, _, mean_case, results = mxnet_run
    ours_case = {**mean_case, "mean_img": str(folder / "ours.bin")}
    ours = _ours(ours_case, path_imgrec=path)  # computes and saves our mean image first
    theirs_mean = load_mean_img(mean_case["mean_img"], (3, 16, 16))
    np.testing.assert_allclose(load_mean_img(ours_case["mean_img"], (3, 16, 16)), theirs_mean, rtol=1e-6, atol=1e-4)
    _assert_same(ours, results[-1], rtol=1e-5, atol=1e-4)
    assert ours[0][0][1].tolist() == [[0, 0], [3, 1], [6, 2], [9, 3]]  # labels from the list, label_width 2
