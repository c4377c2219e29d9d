"""Decompression bombs: an image whose header claims too many pixels is refused before decoding."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest

import mxasync as mx
from mxasync.base import MXAsyncValueError
from mxasync.io.image import codec, header
from mxasync.io.recordio import IRHeader, MXIndexedRecordIO, pack
from mxasync.tools import im2rec

pytest.importorskip("PIL")


def _jpeg(width: int, height: int) -> bytes:
    """A small real JPEG whose frame header (SOF0) is rewritten to claim ``width`` x ``height``."""
    buf = bytearray(codec.encode(np.full((8, 8, 3), 128, np.uint8), ".jpg", quality=50))
    sof = buf.find(b"\xff\xc0")
    assert sof > 0
    struct.pack_into(">HH", buf, sof + 5, height, width)
    return bytes(buf)


def _png(width: int, height: int) -> bytes:
    buf = bytearray(codec.encode(np.zeros((8, 8, 3), np.uint8), ".png"))
    struct.pack_into(">II", buf, 16, width, height)
    struct.pack_into(">I", buf, 29, zlib.crc32(bytes(buf[12:29])))  # a valid IHDR checksum
    return bytes(buf)


def test_header_sizes():
    assert header.image_size(_jpeg(30000, 30000)) == (30000, 30000)
    assert header.image_size(_png(30000, 20000)) == (30000, 20000)
    assert len(_jpeg(30000, 30000)) < 1000
    from PIL import Image

    gif = io.BytesIO()
    Image.new("P", (11, 5)).save(gif, format="GIF")
    assert header.image_size(gif.getvalue()) == (11, 5)
    assert header.image_size(b"\xff\xd8\xff\xd9") is None and header.image_size(b"junk") is None


@pytest.mark.parametrize("make", [_jpeg, _png], ids=["jpeg", "png"])
def test_bomb_refused_by_default(make):
    with pytest.raises(MXAsyncValueError, match=r"30000x30000 = 900,000,000 pixels, above the limit of "
                                                r"178,956,970 pixels"):
        codec.decode(make(30000, 30000))
    with pytest.raises(mx.MXNetError, match=r"imdecode: the image is 30000x30000"):
        mx.image.imdecode(make(30000, 30000))


@pytest.mark.parametrize("make", [_jpeg, _png], ids=["jpeg", "png"])
def test_limit_from_argument_and_environment(make, monkeypatch):
    img = make(64, 48)  # 3,072 pixels claimed
    with pytest.raises(ValueError, match=r"64x48 = 3,072 pixels, above the limit of 3,000 pixels"):
        mx.image.imdecode(img, max_pixels=3000)
    monkeypatch.setenv("MXASYNC_IMAGE_MAX_PIXELS", "3071")
    with pytest.raises(ValueError, match="above the limit of 3,071 pixels"):
        codec.decode(img)
    real = codec.encode(np.zeros((48, 64, 3), np.uint8), ".png")
    with pytest.raises(ValueError, match="MXASYNC_IMAGE_MAX_PIXELS"):
        mx.image.imdecode(real)
    assert mx.image.imdecode(real, max_pixels=0).shape == (48, 64, 3)  # 0: no limit
    monkeypatch.setenv("MXASYNC_IMAGE_MAX_PIXELS", "3072")
    assert mx.image.imdecode(real).shape == (48, 64, 3)


def test_imread_and_other_formats(tmp_path, monkeypatch):
    from PIL import Image

    path = tmp_path / "a.gif"
    Image.new("P", (20, 10)).save(path, format="GIF")
    with pytest.raises(ValueError, match=r"imread\('.*a.gif'\): the image is 20x10 = 200 pixels"):
        mx.image.imread(str(path), max_pixels=199)
    assert mx.image.imread(str(path), max_pixels=200).shape == (10, 20, 3)


def test_image_record_iter_refuses_bomb(tmp_path):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, pack(IRHeader(0, 1.0, 0, 0), _jpeg(30000, 30000)))
    w.close()
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8), batch_size=1)
    with pytest.raises(mx.MXNetError, match="30000x30000.*above the limit"):
        it.next()


def test_im2rec_skips_bomb(tmp_path, capsys):
    root = tmp_path / "img"
    root.mkdir()
    (root / "bomb.jpg").write_bytes(_jpeg(30000, 30000))
    (root / "ok.png").write_bytes(codec.encode(np.zeros((4, 4, 3), np.uint8), ".png"))
    prefix = str(tmp_path / "data")
    assert im2rec.main(["--list", "--no-shuffle", prefix, str(root)]) == 0
    assert im2rec.main([prefix, str(root)]) == 0
    err = capsys.readouterr().err
    assert "skipping" in err and "bomb.jpg" in err and "above the limit" in err
    r = MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    assert len(r.keys) == 1
    r.close()
