"""``mx.nd.load`` reads a stream: header checked before any large read, peak memory near the data."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxasync as mx
from mxasync.ndarray._serialization import LIST_MAGIC, V2_MAGIC, dumps_arrays

_LIMITED = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # an unbounded read dies here
    import mxasync as mx
    try:
        mx.nd.load(sys.argv[1])
    except mx.MXNetError as e:
        print("refused:", e)
""")


def test_dev_zero_refused_at_the_header():
    out = subprocess.run([sys.executable, "-c", _LIMITED, "/dev/zero"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused: corrupt NDArray file: file magic is 0x0" in out.stdout


_PEAK = textwrap.dedent("""
    import sys
    import mxasync as mx
    mx.nd.waitall()  # the package loads lazily: load it (and start the engine) before measuring
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith(key + ":")) * 1024
    before = status("VmRSS")
    arrays = mx.nd.load(sys.argv[1])
    print(status("VmHWM") - before, arrays[0].shape)
""")


def test_peak_memory_near_the_data_size(tmp_path):
    n = 64 << 20  # bytes of data
    path = tmp_path / "big.params"
    mx.nd.save(str(path), [mx.nd.ones((n // 4,))])
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True)
    growth, _ = out.stdout.split(maxsplit=1)
    assert int(growth) < 1.5 * n, f"peak grew by {int(growth) / n:.2f}x the data"  # it read whole + copied: 3x


def _header(count: int) -> bytes:
    return struct.pack("<QQQ", LIST_MAGIC, 0, count)


def _array(shape: tuple[int, ...], flag: int = 0) -> bytes:
    return struct.pack(f"<Iii{len(shape)}qiii", V2_MAGIC, 0, len(shape), *shape, 1, 0, flag)


def test_huge_claim_refused_before_allocating(tmp_path):
    path = tmp_path / "claim.params"
    path.write_bytes(_header(1) + _array((1 << 20, 1 << 20)) + b"\0" * 64)
    with pytest.raises(mx.MXNetError, match=r"truncated NDArray file: expected 4398046511104 bytes for data of "
                                             r"array 0 \(float32, shape \(1048576, 1048576\)\).*only 64 remain"):
        mx.nd.load(str(path))


def test_shape_too_large_for_any_array(tmp_path):
    path = tmp_path / "zero.params"
    path.write_bytes(_header(1) + _array((0, 1 << 62, 1 << 62)) + struct.pack("<Q", 0))
    with pytest.raises(mx.MXNetError, match=r"shape \(0, 4611686018427387904, 4611686018427387904\) of array 0 "
                                             r"is too large for any array"):
        mx.nd.load(str(path))
    with pytest.raises(mx.MXNetError, match="too large for any array"):
        mx.nd.load_frombuffer(path.read_bytes())


def test_file_objects_and_offsets(tmp_path):
    blob = dumps_arrays({"a": np.arange(6, dtype=np.float64).reshape(2, 3), "b": np.zeros((0, 4), np.int32)})
    got = mx.nd.load(io.BytesIO(blob))  # no file descriptor: lengths checked as bytes arrive
    assert got["a"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]] and got["b"].shape == (0, 4)
    path = tmp_path / "x.params"
    path.write_bytes(b"junk" + blob)
    with open(path, "rb") as f:
        f.seek(4)  # a file positioned mid-way: lengths are checked against what is left after it
        assert mx.nd.load(f)["a"].dtype == np.float64
    with pytest.raises(mx.MXNetError, match="truncated NDArray file: expected .* for name 0"):
        mx.nd.load(io.BytesIO(blob[:-10] + b""))
    with pytest.raises(OSError, match="cannot read NDArray file .*missing.params"):
        mx.nd.load(str(tmp_path / "missing.params"))
