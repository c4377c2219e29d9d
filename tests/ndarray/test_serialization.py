"""NDArray list files against fixtures written by the real MXNet 1.9.1 (see tests/fixtures/mxnet)."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mxasync import atomic
from mxasync.base import MXAsyncError
from mxasync.ndarray import _serialization as ser
from mxasync.ndarray._serialization import ArrayRecord, dumps_arrays, load_arrays, loads_arrays, save_arrays

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet"
MANIFEST = json.loads((FIX / "arrays-manifest.json").read_text())
EXPECTED = dict(np.load(FIX / "arrays-expected.npz"))
MX_PYTHON = Path(os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python"))
DENSE = sorted(f for f, m in MANIFEST.items() if "error" not in m)


def _expected(fname: str) -> list[ArrayRecord]:
    return [ArrayRecord(EXPECTED[a["key"]], tuple(a["context"])) for a in MANIFEST[fname]["arrays"]]


def _as_list(loaded: list | dict) -> list[ArrayRecord]:
    return list(loaded.values()) if isinstance(loaded, dict) else loaded


def _assert_same(got: ArrayRecord, want: ArrayRecord) -> None:
    assert got.context == want.context
    assert got.array.dtype == want.array.dtype
    assert got.array.shape == want.array.shape
    np.testing.assert_array_equal(got.array, want.array)


@pytest.mark.parametrize("fname", DENSE)
def test_fixture_loads(fname: str) -> None:
    meta = MANIFEST[fname]
    loaded = load_arrays(FIX / fname)
    if meta["form"] == "dict" and meta["names"]:
        assert isinstance(loaded, dict) and list(loaded) == meta["names"]
    else:
        assert isinstance(loaded, list)
    want = _expected(fname)
    assert len(_as_list(loaded)) == len(want)
    for got, exp in zip(_as_list(loaded), want, strict=True):
        _assert_same(got, exp)
        assert got.array.flags.writeable and got.array.flags.c_contiguous


@pytest.mark.parametrize("fname", [f for f in DENSE if MANIFEST[f]["byte_equal"]])
def test_bytes_equal_mxnet(fname: str) -> None:
    meta = MANIFEST[fname]
    want = _expected(fname)
    data = dict(zip(meta["names"], want, strict=True)) if meta["names"] else want
    assert dumps_arrays(data, np_shape=meta.get("np_shape", False)) == (FIX / fname).read_bytes()


def test_fixture_contents() -> None:
    got = load_arrays(FIX / "list-dtypes.nd")
    assert [r.array.dtype.name for r in got] == [
        "float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool", "float32", "float32",
        "float32", "float64",
    ]
    assert got[6].array.tolist() == [-(2**63), 2**40 + 3, 2**63 - 1]
    assert got[9].array.shape == (0, 3) and got[8].array.shape == (1,)
    gpu = load_arrays(FIX / "gpu-context.params")
    assert [r.context for r in gpu.values()] == [(2, 0), (1, 0), (2, 1), (1, 0), (1, 0)]
    assert "w\u00e9ight" in gpu
    assert load_arrays(FIX / "pinned.nd")[0].context == (3, 0)
    assert load_arrays(FIX / "empty.nd") == []
    assert load_arrays(FIX / "legacy-v1.nd")["b"].array.shape == ()  # V1 ndim 0 is a scalar
    assert load_arrays(FIX / "np-shape.nd")[0].array.shape == ()  # and so is V3's


def test_lenet_params_match_io() -> None:
    params = load_arrays(FIX / "lenet-0000.params")
    io_arrays = np.load(FIX / "lenet-io.npz")
    assert isinstance(params, dict)
    assert sorted(params) == sorted(k for k in io_arrays.files if k.startswith(("arg:", "aux:")))
    for name, rec in params.items():
        np.testing.assert_array_equal(rec.array, io_arrays[name])
    assert dumps_arrays(params) == (FIX / "lenet-0000.params").read_bytes()


@pytest.mark.parametrize(("fname", "stype"), [("row-sparse.nd", "row_sparse"), ("csr.nd", "csr")])
def test_sparse_loads_and_saves_the_same_bytes(fname: str, stype: str) -> None:
    loaded = load_arrays(FIX / fname)
    recs = list(loaded.values()) if isinstance(loaded, dict) else loaded
    assert all(r.array.stype == stype for r in recs if r.array is not None)
    assert dumps_arrays(loaded) == (FIX / fname).read_bytes()


def test_round_trip_every_dtype_and_context() -> None:
    rng = np.random.default_rng(0)
    data = {
        f"a{i}": (rng.standard_normal((2, 3)) * 50).astype(dt)
        for i, dt in enumerate(ser.TYPE_FLAGS.values())
    }
    data["gpu"] = (np.arange(4.0).reshape(2, 2)[:, ::-1], (2, 3))  # not contiguous, on gpu(3)
    data["empty"] = np.zeros((3, 0, 2), dtype=np.int8)
    data["none"] = None
    back = loads_arrays(dumps_arrays(data))
    assert list(back) == list(data)
    assert back["none"] == ArrayRecord(None, (1, 0))
    assert back["gpu"].context == (2, 3)
    np.testing.assert_array_equal(back["gpu"].array, data["gpu"][0])
    for k, v in data.items():
        if isinstance(v, np.ndarray):
            _assert_same(back[k], ArrayRecord(v))
    # list form, numpy shape semantics, big-endian input
    lst = [np.array(2.5), np.arange(3, dtype=">i4"), None]
    back_l = loads_arrays(dumps_arrays(lst, np_shape=True))
    assert back_l[0].array.shape == () and back_l[0].array.item() == 2.5
    assert back_l[1].array.dtype == np.dtype("int32") and back_l[1].array.tolist() == [0, 1, 2]
    assert back_l[2].array is None


def test_save_to_file_objects_and_paths(tmp_path: Path) -> None:
    buf = io.BytesIO()
    save_arrays(buf, [np.ones(2, np.float32)])
    assert load_arrays(io.BytesIO(buf.getvalue()))[0].array.tolist() == [1.0, 1.0]
    save_arrays(tmp_path / "x.params", {"w": np.ones(3)})
    assert load_arrays(str(tmp_path / "x.params"))["w"].array.tolist() == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == ["x.params"]
    assert (tmp_path / "x.params").stat().st_mode & 0o777 == 0o666 & ~atomic._umask()


def test_save_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(MXAsyncError, match="0-d array"):
        dumps_arrays([np.array(1.0)])
    with pytest.raises(MXAsyncError, match="complex128"):
        dumps_arrays([np.zeros(2, complex)])
    with pytest.raises(MXAsyncError, match="unknown device type 4"):
        dumps_arrays([(np.zeros(2), (4, 0))])
    with pytest.raises(MXAsyncError, match="names must be str"):
        dumps_arrays({1: np.zeros(2)})
    with pytest.raises(MXAsyncError, match="list or dict"):
        dumps_arrays(np.zeros(2))
    # validation happens before the disk is touched
    with pytest.raises(MXAsyncError):
        save_arrays(tmp_path / "bad.nd", [np.zeros(2), np.zeros(2, np.uint16)])
    assert os.listdir(tmp_path) == []


def test_atomic_save_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "model.params"
    save_arrays(target, {"w": np.zeros(4)})
    old = target.read_bytes()

    def boom(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        save_arrays(target, {"w": np.ones(1000)})
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["model.params"]  # no temp file left


def test_truncated_everywhere() -> None:
    blob = (FIX / "dict-params.params").read_bytes()
    cuts = sorted(set(range(0, 120)) | set(range(120, len(blob), 97)) | {len(blob) - 1})
    for cut in cuts:
        with pytest.raises(MXAsyncError, match="truncated NDArray file: expected .* at byte offset"):
            loads_arrays(blob[:cut])


def test_truncation_message_names_the_place() -> None:
    blob = dumps_arrays([np.zeros((2, 3), np.float32)])
    with pytest.raises(MXAsyncError, match=r"expected 24 bytes for data of array 0 \(float32, shape \(2, 3\)\) at byte offset 64, but only 6 remain"):
        loads_arrays(blob[:70])


def test_corrupt_magic_and_fields() -> None:
    blob = bytearray((FIX / "list-dtypes.nd").read_bytes())
    with pytest.raises(MXAsyncError, match="file magic is 0x113, expected 0x112"):
        loads_arrays(b"\x13" + bytes(blob[1:]))
    bad = bytearray(blob)
    struct.pack_into("<I", bad, 24, 0xDEADBEEF)
    with pytest.raises(MXAsyncError, match="bad magic 0xDEADBEEF for array 0 .* at byte offset 24"):
        loads_arrays(bytes(bad))
    bad = bytearray(blob)
    struct.pack_into("<i", bad, 60, 9)  # type flag of array 0
    with pytest.raises(MXAsyncError, match="unknown type flag 9 for array 0"):
        loads_arrays(bytes(bad))
    bad = bytearray(blob)
    struct.pack_into("<i", bad, 52, 7)  # dev_type of array 0
    with pytest.raises(MXAsyncError, match="unknown device type 7"):
        loads_arrays(bytes(bad))
    bad = bytearray(blob)
    struct.pack_into("<Q", bad, 16, 2**40)
    with pytest.raises(MXAsyncError, match="the 1099511627776 arrays the array count announces"):
        loads_arrays(bytes(bad))
    with pytest.raises(MXAsyncError, match="1 names for 2 arrays"):
        loads_arrays(dumps_arrays([np.zeros(1), np.zeros(1)])[:-8] + struct.pack("<QQ", 1, 0))


def test_legacy_layouts() -> None:
    head = struct.pack("<QQQ", 0x112, 0, 2)
    v1 = struct.pack("<IIq", 0xF993FAC8, 1, 2) + struct.pack("<iii", 1, 0, 4) + struct.pack("<2i", 5, -5)
    v0 = struct.pack("<II", 2, 1) + struct.pack("<I", 1) + struct.pack("<iii", 2, 0, 3) + b"\x07"
    got = loads_arrays(head + v1 + v0 + struct.pack("<Q", 0))
    assert got[0].array.tolist() == [5, -5] and got[0].array.dtype == np.int32
    assert got[1].array.shape == (1, 1) and got[1].context == (2, 0) and got[1].array.item() == 7


@pytest.mark.skipif(not MX_PYTHON.exists(), reason=f"no MXNet 1.9.1 at {MX_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_real_mxnet_loads_our_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    data = {
        "arg:w": rng.standard_normal((3, 4)).astype(np.float32),
        "aux:m": np.arange(5, dtype=np.int64),
        "h": (rng.standard_normal(6).astype(np.float16), (2, 0)),
        "z": np.zeros((0, 2), np.uint8),
        "b": np.array([True, False]),
    }
    save_arrays(tmp_path / "ours.params", data)
    script = (
        "import json, sys, mxnet as mx\n"
        "d = mx.nd.load(sys.argv[1])\n"
        "print(json.dumps({k: [str(v.dtype.__name__), list(v.shape), v.asnumpy().tolist()] for k, v in d.items()}))\n"
    )
    out = subprocess.run([str(MX_PYTHON), "-c", script, str(tmp_path / "ours.params")],
                         capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(got) == list(data)
    for k, v in data.items():
        arr = v[0] if isinstance(v, tuple) else v
        assert got[k][0] == arr.dtype.name.replace("bool", "bool_")
        assert tuple(got[k][1]) == arr.shape
        np.testing.assert_array_equal(np.array(got[k][2], dtype=arr.dtype).reshape(arr.shape), arr)


def _one_by_one(data: dict, np_shape: bool) -> bytes:
    """The file the format's description (``_serialization``'s docstring) gives, written array by
    array with struct: what the block writer's output is checked against."""
    magic = ser.V3_MAGIC if np_shape else ser.V2_MAGIC
    out = [struct.pack("<QQQ", ser.LIST_MAGIC, 0, len(data))]
    for rec in data.values():
        arr = rec.array
        if arr is None:
            out.append(struct.pack("<Iii", magic, 0, -1 if np_shape else 0))
            continue
        out.append(struct.pack(f"<IiI{arr.ndim}qiii", magic, 0, arr.ndim, *arr.shape, *rec.context,
                               ser.type_flag_of(arr.dtype)))
        out.append(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
    out.append(struct.pack("<Q", len(data)))
    for name in data:
        out += [struct.pack("<Q", len(name.encode())), name.encode()]
    return b"".join(out)


@pytest.mark.parametrize("np_shape", [False, True])
def test_runs_of_small_arrays_write_the_same_bytes_as_one_by_one(np_shape, monkeypatch):
    """Consecutive small arrays of one shape, dtype and context go out as one block: the same bytes as
    records written one at a time, whatever interrupts the runs (another shape, dtype, context, a big array,
    a big-endian array, a "none" array)."""
    from mxasync.ndarray._serialization import writer

    rng = np.random.default_rng(0)
    items = [ArrayRecord(rng.standard_normal(4).astype(np.float32)) for _ in range(20)]
    items += [ArrayRecord(rng.standard_normal((2, 3)).astype(np.float32), (2, 0)) for _ in range(17)]
    items += [ArrayRecord(np.arange(3, dtype=np.int64))] * 16 + [ArrayRecord(np.arange(3, dtype=">i8"))] * 16
    items += [ArrayRecord(None)] + [ArrayRecord(np.zeros((2, 0), np.float32))] * 18
    items += [ArrayRecord(rng.standard_normal(2000).astype(np.float32)) for _ in range(16)]  # 8 kB each
    items += [ArrayRecord(rng.standard_normal(4).astype(np.float32)[::-1]) for _ in range(16)]  # not contiguous
    items += [ArrayRecord((np.arange(i % 5 + 1) % 2).astype(["<f4", "|b1", ">f8", "<i8"][i % 4]), (1, i % 3))
              for i in range(40)]  # shapes, dtypes and contexts interleaved: runs of one array
    data = {f"a{i}": r for i, r in enumerate(items)}
    runs = dumps_arrays(data, np_shape=np_shape)
    assert runs == _one_by_one(data, np_shape)
    monkeypatch.setattr(writer, "_RUN_BYTES", 1)  # every block ends after its first array
    assert runs == dumps_arrays(data, np_shape=np_shape)
    back = loads_arrays(runs, np_shape=np_shape)
    for name, rec in data.items():
        if rec.array is None:
            assert back[name].array is None
        else:
            np.testing.assert_array_equal(back[name].array, rec.array)
            assert back[name].context == rec.context
