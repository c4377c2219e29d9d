"""Compatibility with MXNet 1.9.1's RecordIO, both ways.

Files written by the real MXNet (``fixtures/mxnet191.*``, made by
``fixtures/make_mxnet_fixtures.py``) must read identically here, and rewriting
their records here must give the same bytes. When the MXNet venv is present
(``/work/venvs/mx191/bin/python`` or ``$MXASYNC_MXNET_PYTHON``), files written
here are read back by MXNet itself, and ``ImageRecordIter`` is compared with
``RecordImagePipeline``; otherwise those tests are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess

import numpy as np
import pytest

from mxasync.io.image import RecordImagePipeline
from mxasync.io.recordio import (
    IRHeader,
    MXIndexedRecordIO,
    MXRecordIO,
    RecordReader,
    pack,
    pack_img,
    unpack,
    unpack_img,
)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
REC, IDX = os.path.join(FIXTURES, "mxnet191.rec"), os.path.join(FIXTURES, "mxnet191.idx")
MXNET_PYTHON = os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python")
needs_mxnet = pytest.mark.skipif(not os.path.exists(MXNET_PYTHON), reason=f"no MXNet 1.9.1 at {MXNET_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
MAGIC = struct.pack("<I", 0xCED7230A)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def meta():
    with open(os.path.join(FIXTURES, "mxnet191.json")) as f:
        return json.load(f)


def test_fixture_files_are_the_ones_described(meta):
    for path, key in ((REC, "rec_sha256"), (IDX, "idx_sha256")):
        with open(path, "rb") as f:
            assert sha(f.read()) == meta[key], f"{path} changed; re-run make_mxnet_fixtures.py"


def test_read_mxnet_records_by_index(meta):
    reader = MXIndexedRecordIO(IDX, REC, "r")
    assert reader.keys == [e["key"] for e in meta["records"]]
    for e in meta["records"]:
        assert reader.idx[e["key"]] == e["offset"]
        record = reader.read_idx(e["key"])
        assert len(record) == e["length"] and sha(record) == e["sha256"], e["name"]
        if e["kind"] == "raw":
            continue
        header, body = unpack(record)
        assert (header.flag, header.id, header.id2) == (e["flag"], e["id"], e["id2"]), e["name"]
        np.testing.assert_array_equal(np.asarray(header.label, np.float32), np.asarray(e["label"], np.float32))
        assert sha(body) == e["payload_sha256"]
    reader.close()


def test_decode_mxnet_images(meta):
    pytest.importorskip("PIL")
    reader = MXIndexedRecordIO(IDX, REC, "r")
    for e in (e for e in meta["records"] if e["kind"] == "image"):
        _, img = unpack_img(reader.read_idx(e["key"]))
        expected = np.asarray(e["pixels_bgr"], np.uint8)
        assert img.shape == expected.shape, e["name"]
        diff = np.abs(img.astype(int) - expected.astype(int)).max()
        assert diff <= (0 if e["fmt"] == ".png" else 2), (e["name"], diff)  # JPEG decoders may differ by 1-2
    reader.close()


def test_read_mxnet_file_sequentially(meta):
    with MXRecordIO(REC, "r") as reader:
        got = []
        while (record := reader.read()) is not None:
            got.append(sha(record))
    assert got == [e["sha256"] for e in meta["records"]]
    with RecordReader(REC) as rr:
        assert rr.offsets() == [e["offset"] for e in meta["records"]]


def test_rewriting_mxnet_records_is_byte_identical(meta, tmp_path):
    reader = MXIndexedRecordIO(IDX, REC, "r")
    rec, idx = str(tmp_path / "copy.rec"), str(tmp_path / "copy.idx")
    with MXIndexedRecordIO(idx, rec, "w") as writer:
        for key in reader.keys:
            writer.write_idx(key, reader.read_idx(key))
    reader.close()
    for path, key in ((rec, "rec_sha256"), (idx, "idx_sha256")):
        with open(path, "rb") as f:
            assert sha(f.read()) == meta[key]


def _run_mxnet(*args: str) -> object:
    script = os.path.join(FIXTURES, "read_with_mxnet.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([MXNET_PYTHON, script, *args], capture_output=True, text=True, timeout=120, env=env)
    if out.returncode != 0:
        pytest.fail(f"MXNet failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


@needs_mxnet
def test_mxnet_reads_mxasync_files(tmp_path, gradient):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(3)
    records = [b"", b"x", MAGIC, b"abcd" + MAGIC + MAGIC + b"e", b"a" + MAGIC + b"bcd", rng.bytes(5000) + MAGIC]
    records += [pack(IRHeader(0, lab, 9, 2**50), b"body" + MAGIC) for lab in (1.5, [1, 2, 3], list(range(254)))]
    images = [pack_img(IRHeader(0, 4.0, 11, 0), gradient(9, 14)[:, :, ::-1], img_fmt=fmt, quality=q)
              for fmt, q in ((".jpg", 90), (".png", 3))]
    images.append(pack_img(IRHeader(0, 5.0, 12, 0), gradient(7, 7)[:, :, 0], img_fmt=".jpg"))
    rec, idx = str(tmp_path / "ours.rec"), str(tmp_path / "ours.idx")
    with MXIndexedRecordIO(idx, rec, "w") as writer:
        for i, record in enumerate(records + images):
            writer.write_idx(i, record)
    seen = _run_mxnet("records", idx, rec)
    expected = records + images
    assert seen["keys"] == list(range(len(expected)))
    assert seen["sequential_sha256"] == [sha(r) for r in expected]
    for i, record in enumerate(expected):
        item = seen["records"][str(i)]
        assert item["sha256"] == sha(record)
        if record in images:
            ours = unpack_img(record)[1].astype(int)
            assert np.abs(np.asarray(item["pixels_bgr"]) - ours).max() <= 2
        elif len(record) >= 24 and i >= len(records) - 3:
            header, _ = unpack(record)
            flag, label, id_, id2 = item["header"]
            assert (flag, id_, id2) == (header.flag, header.id, header.id2)
            np.testing.assert_array_equal(np.asarray(label, np.float32), np.asarray(header.label, np.float32))


@needs_mxnet
def test_image_record_iter_matches_pipeline(tmp_path):
    pytest.importorskip("PIL")
    rec = str(tmp_path / "imgs.rec")
    with MXRecordIO(rec, "w") as writer:
        for i in range(10):
            h, w = (12, 16) if i % 2 else (14, 11)
            img = np.zeros((h, w, 3), np.uint8)
            img[..., 0], img[..., 1], img[..., 2] = i * 20, np.arange(w) * 9, np.arange(h)[:, None] * 13
            writer.write(pack_img(IRHeader(0, float(i), i, 0), img, img_fmt=".png"))
    kwargs = {"data_shape": [3, 8, 8], "batch_size": 4, "mean_r": 10.0, "mean_g": 5.0, "std_b": 2.0, "scale": 0.5,
              "pad": 2, "fill_value": 7}
    theirs = _run_mxnet("iter", rec, json.dumps(kwargs))
    with RecordImagePipeline(rec, (3, 8, 8), 4, mean=[10, 5, 0], std=[1, 1, 2], scale=0.5, pad=2, fill_value=7) as p:
        ours = []
        for epoch in range(2):
            if epoch:
                p.reset()
            ours.append([(b.data.copy(), b.label.copy(), b.pad) for b in p])
    assert [len(e) for e in ours] == [len(e) for e in theirs]  # 3 batches, then 2 (round robin)
    for our_epoch, their_epoch in zip(ours, theirs, strict=True):
        for (data, label, pad), b in zip(our_epoch, their_epoch, strict=True):
            assert label.tolist() == b["label"] and pad == b["pad"]
            np.testing.assert_allclose(data, np.asarray(b["data"], np.float32), rtol=1e-5, atol=1e-4)
