"""RecordIO reader/writer tests, mirroring MXNet's tests/python/unittest/test_recordio.py."""

from __future__ import annotations

import os
import pickle
import re
import struct
import sys

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.io.recordio import (
    MAGIC,
    IRHeader,
    MXIndexedRecordIO,
    MXRecordIO,
    RecordReader,
    encode_record,
    pack,
    pack_img,
    unpack,
    unpack_img,
)

MAGIC_BYTES = struct.pack("<I", MAGIC)
N = 255


def payload(i: int) -> bytes:
    return str(i).encode() * (i % 7 + 1)


@pytest.fixture
def paths(tmp_path):
    return str(tmp_path / "data.idx"), str(tmp_path / "data.rec")


def test_sequential_write_read(paths):
    _, rec = paths
    with MXRecordIO(rec, "w") as writer:
        for i in range(N):
            writer.write(payload(i))
    reader = MXRecordIO(rec, "r")
    for i in range(N):
        assert reader.read() == payload(i)
    assert reader.read() is None
    reader.reset()
    assert reader.read() == payload(0)
    reader.close()
    reader.close()  # closing twice is fine


def test_indexed_write_read(paths):
    idx, rec = paths
    writer = MXIndexedRecordIO(idx, rec, "w")
    offsets = []
    for i in range(N):
        offsets.append(writer.tell())
        writer.write_idx(i, payload(i))
    writer.close()
    with open(idx) as f:
        lines = f.read().splitlines()
    assert lines == [f"{i}\t{off}" for i, off in enumerate(offsets)]
    reader = MXIndexedRecordIO(idx, rec, "r")
    assert reader.keys == list(range(N))
    for i in np.random.default_rng(0).permutation(N).tolist():
        assert reader.read_idx(i) == payload(i)
    reader.seek(10)
    assert reader.read() == payload(10) and reader.read() == payload(11)  # sequential after seek
    with pytest.raises(KeyError, match="999"):
        reader.read_idx(999)
    reader.close()


def test_string_keys(paths):
    idx, rec = paths
    with MXIndexedRecordIO(idx, rec, "w", key_type=str) as writer:
        for name in ("cat", "dog", "emu"):
            writer.write_idx(name, name.encode())
    with MXIndexedRecordIO(idx, rec, "r", key_type=str) as reader:
        assert reader.keys == ["cat", "dog", "emu"]
        assert reader.read_idx("dog") == b"dog"


@pytest.mark.parametrize("label", [0, 3, -1.5, np.float32(2.25), 1e30])
def test_pack_scalar_label(label):
    header, body = unpack(pack(IRHeader(7, label, 12, 34), b"body"))
    assert header == IRHeader(0, np.float32(label), 12, 34)  # flag is forced to 0 for scalars
    assert body == b"body"


def test_pack_vector_labels_1_to_254():
    rng = np.random.default_rng(1)
    for n in range(1, 255):
        label = rng.uniform(-10, 10, n).astype(np.float32)
        header, body = unpack(pack(IRHeader(0, label, n, 2**40 + n), b"x" * n))
        assert header.flag == n and header.id == n and header.id2 == 2**40 + n
        np.testing.assert_array_equal(header.label, label)
        assert body == b"x" * n


@pytest.mark.parametrize("bad", [b"", b"short", pack(IRHeader(0, [1, 2, 3], 0, 0), b"")[:30]])
def test_unpack_too_short(bad):
    with pytest.raises(MXAsyncError, match="too short"):
        unpack(bad)


MAGIC_CASES = [
    # (payload, parts MXNet writes)
    (b"", 1),
    (MAGIC_BYTES, 2),
    (MAGIC_BYTES + b"abcd", 2),
    (b"abcd" + MAGIC_BYTES, 2),
    (b"abcd" + MAGIC_BYTES + b"xy", 2),
    (MAGIC_BYTES * 3, 4),
    (b"abcd" + MAGIC_BYTES + b"1234" + MAGIC_BYTES + b"z", 3),
    (b"a" + MAGIC_BYTES + b"bcd", 1),        # unaligned: stored as is
    (b"ab" + MAGIC_BYTES, 1),
    (b"abcde" + MAGIC_BYTES[:3], 1),
    (b"\0" * 4096 + MAGIC_BYTES + b"\1" * 4097, 2),
]


@pytest.mark.parametrize(("data", "parts"), MAGIC_CASES)
def test_records_containing_magic(paths, data, parts):
    _, rec = paths
    encoded = encode_record(data)
    assert len(encoded) % 4 == 0
    # walk the parts: each starts with the magic word and a header whose flag tells its place
    pos, flags = 0, []
    while pos < len(encoded):
        magic, lrec = struct.unpack_from("<II", encoded, pos)
        assert magic == MAGIC
        flags.append(lrec >> 29)
        pos += 8 + ((lrec & ((1 << 29) - 1)) + 3) // 4 * 4
    assert len(flags) == parts
    assert flags == ([0] if parts == 1 else [1] + [2] * (parts - 2) + [3])
    with MXRecordIO(rec, "w") as writer:
        writer.write(b"before")
        writer.write(data)
        writer.write(b"after")
    with MXRecordIO(rec, "r") as reader:
        assert [reader.read(), reader.read(), reader.read(), reader.read()] == [b"before", data, b"after", None]
    with RecordReader(rec) as rr:
        offsets = rr.offsets()
        assert len(offsets) == 3
        assert rr.read_at(offsets[1]) == data


def _good_file(rec: str) -> list[int]:
    """Three records, the middle one split in two parts; returns each part's byte offset."""
    with MXRecordIO(rec, "w") as writer:
        writer.write(b"A" * 10)                    # part at 0, 8 + 12 bytes
        writer.write(b"B" * 8 + MAGIC_BYTES + b"C" * 5)  # parts at 20 (8+8) and 36 (8+8)
        writer.write(b"D" * 3)                     # part at 52
    return [0, 20, 36, 52]


CORRUPTIONS = [
    # (name, mutate(bytes) -> bytes, message regex, byte offset named)
    ("truncated header", lambda b: b[:55], r"truncated.*3 of 8 header bytes", 52),
    ("truncated payload", lambda b: b[:62], r"truncated.*needs 4 payload bytes but only 2", 52),
    ("bad magic", lambda b: b[:20] + b"\0\0\0\0" + b[24:], r"corrupt.*magic 0x00000000", 20),
    ("missing last part", lambda b: b[:36], r"truncated.*record at byte offset 20", 36),
    ("continuation first", lambda b: b[:4] + struct.pack("<I", (2 << 29) | 10) + b[8:], r"part flag 2", 0),
    ("start inside record", lambda b: b[:40] + struct.pack("<I", (1 << 29) | 8) + b[44:], r"part flag 1", 36),
    ("bad flag", lambda b: b[:56] + struct.pack("<I", (5 << 29) | 3) + b[60:], r"part flag 5", 52),
]


@pytest.mark.parametrize(("name", "mutate", "pattern", "offset"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_files_name_file_and_offset(paths, name, mutate, pattern, offset):
    _, rec = paths
    _good_file(rec)
    with open(rec, "rb") as f:
        data = f.read()
    with open(rec, "wb") as f:
        f.write(mutate(data))
    expected = re.compile(re.escape(rec) + ".*" + pattern + f"|{re.escape(rec)}.*byte offset {offset}")
    with pytest.raises(MXAsyncError) as info:
        with MXRecordIO(rec, "r") as reader:
            while reader.read() is not None:
                pass
    msg = str(info.value)
    assert rec in msg and f"byte offset {offset}" in msg and re.search(pattern, msg), msg
    with pytest.raises(MXAsyncError) as info2:
        RecordReader(rec).offsets()
    assert rec in str(info2.value) and expected.search(str(info2.value))


def test_read_after_error_is_repeatable(paths):
    _, rec = paths
    _good_file(rec)
    with open(rec, "r+b") as f:
        f.truncate(55)
    reader = MXRecordIO(rec, "r")
    assert reader.read() == b"A" * 10
    assert reader.read() == b"B" * 8 + MAGIC_BYTES + b"C" * 5
    for _ in range(2):
        with pytest.raises(MXAsyncError, match="byte offset 52"):
            reader.read()


def test_bad_index_file(paths):
    idx, rec = paths
    _good_file(rec)
    with open(idx, "w") as f:
        f.write("0\t0\nnot-a-line\n")
    with pytest.raises(MXAsyncError, match=re.escape(idx) + ":2: bad index line"):
        MXIndexedRecordIO(idx, rec, "r")
    with open(idx, "w") as f:
        f.write("0\t0\n1\t64\n")
    reader = MXIndexedRecordIO(idx, rec, "r")
    with pytest.raises(MXAsyncError, match="past the last record"):
        reader.read_idx(1)


@pytest.mark.parametrize(("flag", "call"), [("r", lambda f: f.write(b"x")), ("w", lambda f: f.read())])
def test_wrong_mode(paths, flag, call):
    _, rec = paths
    MXRecordIO(rec, "w").close()
    f = MXRecordIO(rec, flag)
    with pytest.raises(MXAsyncError, match="opened with flag"):
        call(f)
    f.close()
    with pytest.raises(MXAsyncError, match="closed"):
        call(f)


def test_missing_file_and_bad_flag(tmp_path):
    with pytest.raises(MXAsyncError, match="cannot open RecordIO file"):
        MXRecordIO(str(tmp_path / "nope.rec"), "r")
    with pytest.raises(ValueError, match="'r' or 'w'"):
        MXRecordIO(str(tmp_path / "x.rec"), "a")


def test_large_writes_are_flushed_on_close(paths):
    _, rec = paths
    blobs = [bytes([i]) * (300_000 + i) for i in range(8)]  # crosses the 1 MiB buffer several times
    writer = MXRecordIO(rec, "w")
    for blob in blobs:
        writer.write(blob)
    size = writer.tell()
    del writer  # the finalizer flushes too
    assert os.path.getsize(rec) == size
    with MXRecordIO(rec, "r") as reader:
        assert [reader.read() for _ in blobs] == blobs


def test_pickle_reopens(paths):
    idx, rec = paths
    with MXIndexedRecordIO(idx, rec, "w") as writer:
        for i in range(5):
            writer.write_idx(i, payload(i))
    reader = MXRecordIO(rec, "r")
    reader.read()
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read() == payload(0)  # re-opened from the start, as MXNet does
    assert reader.read() == payload(1)  # the original is untouched
    indexed = pickle.loads(pickle.dumps(MXIndexedRecordIO(idx, rec, "r")))
    assert indexed.read_idx(3) == payload(3)
    rr = pickle.loads(pickle.dumps(RecordReader(rec)))
    assert rr.read_at(rr.offsets()[4]) == payload(4)
    writer = MXRecordIO(rec + "2", "w")
    with pytest.raises(MXAsyncError, match="cannot pickle an open RecordIO writer"):
        pickle.dumps(writer)
    writer.close()
    assert pickle.loads(pickle.dumps(writer)).is_open is False


def _in_child(fn) -> bytes:
    """Run ``fn`` in a forked child and return the bytes it produced (or 'ERR: ...')."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- child
        os.close(r)
        try:
            out = fn()
        except BaseException as e:  # noqa: BLE001
            out = f"ERR: {type(e).__name__}: {e}".encode()
        os.write(w, out)
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    return b"".join(chunks)


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs fork")
def test_fork_reopens_reader_and_refuses_writer(paths):
    idx, rec = paths
    with MXIndexedRecordIO(idx, rec, "w") as writer:
        for i in range(6):
            writer.write_idx(i, payload(i))
    reader = MXRecordIO(rec, "r")
    indexed = MXIndexedRecordIO(idx, rec, "r")
    shared = RecordReader(rec)
    assert reader.read() == payload(0) and reader.read() == payload(1)
    assert _in_child(lambda: reader.read() + b"|" + reader.read()) == payload(0) + b"|" + payload(1)
    assert reader.read() == payload(2)  # the parent's position is unaffected
    assert _in_child(lambda: indexed.read_idx(4)) == payload(4)
    assert _in_child(lambda: shared.read_at(shared.offsets()[5])) == payload(5)
    writer = MXRecordIO(rec + ".w", "w")
    writer.write(b"parent")
    assert _in_child(lambda: writer.write(b"child") or b"ok").startswith(b"ERR: MXAsyncError")
    writer.write(b"parent2")
    writer.close()
    with MXRecordIO(rec + ".w", "r") as check:  # the child did not flush the parent's buffer
        assert [check.read(), check.read(), check.read()] == [b"parent", b"parent2", None]


@pytest.mark.parametrize("fmt", [".png", ".jpg"])
@pytest.mark.parametrize("shape", [(9, 13, 3), (8, 8)])
def test_pack_img_roundtrip(gradient, fmt, shape):
    pytest.importorskip("PIL")
    img = gradient(*shape[:2])
    if len(shape) == 2:
        img = img[:, :, 1]
    header = IRHeader(0, [1.0, 2.0], 42, 7)
    h, out = unpack_img(pack_img(header, img, quality=95, img_fmt=fmt))
    assert h.flag == 2 and h.id == 42 and h.label.tolist() == [1.0, 2.0]
    assert out.shape == img.shape and out.dtype == np.uint8
    err = np.abs(out.astype(int) - img.astype(int))
    assert err.max() == 0 if fmt == ".png" else err.mean() < 3


def test_unpack_img_flags_and_bgr():
    pytest.importorskip("PIL")
    bgr = np.zeros((4, 5, 3), np.uint8)
    bgr[..., 0] = 200  # blue in OpenCV order
    s = pack_img(IRHeader(0, 0, 0, 0), bgr, img_fmt=".png")
    assert unpack_img(s)[1][0, 0].tolist() == [200, 0, 0]
    assert unpack_img(s, iscolor=1)[1].shape == (4, 5, 3)
    gray = unpack_img(s, iscolor=0)[1]
    assert gray.shape == (4, 5) and abs(int(gray[0, 0]) - round(0.114 * 200)) <= 1
    with pytest.raises(MXAsyncError, match="cannot decode"):
        unpack_img(pack(IRHeader(0, 0, 0, 0), b"not an image"))


def test_writer_publishes_whole_file_at_close(tmp_path):
    from mxasync.io.recordio import MXIndexedRecordIO

    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, b"first")
    w.close()
    w = MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, b"second, unfinished")
    assert sorted(os.listdir(tmp_path))[-2:] == ["a.idx", "a.rec"]
    r = MXIndexedRecordIO(idx, rec, "r")
    assert r.read_idx(0) == b"first"  # a reader never sees the half-written file
    r.close()
    w.discard()
    assert sorted(os.listdir(tmp_path)) == ["a.idx", "a.rec"]
    r = MXIndexedRecordIO(idx, rec, "r")
    assert r.read_idx(0) == b"first"
    r.close()


def test_negative_offset_in_index(tmp_path):
    from mxasync.io.recordio import MXIndexedRecordIO
    from mxasync.io.recordio_reader import RecordReader

    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, b"abc")
    w.close()
    with open(idx, "w") as f:
        f.write("0\t-5\n")
    with pytest.raises(MXAsyncError, match=r"a.idx:1: bad index line '0\\t-5': the byte offset -5 of key 0 is "
                                           r"negative"):
        MXIndexedRecordIO(idx, rec, "r")
    with RecordReader(rec) as r, pytest.raises(MXAsyncError, match="negative byte offset -5"):
        r.read_at(-5)
