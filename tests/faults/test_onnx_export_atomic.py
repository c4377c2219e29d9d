"""Issue 34, item 1: ``mx.onnx.export_model`` writes through ``mxasync.atomic``: a disk that fills up
mid-write leaves the previous model (and its external data file) whole, and the error names the target."""

from __future__ import annotations

import builtins
import errno
import os

import numpy as np
import pytest

import mxasync as mx

pytestmark = pytest.mark.fault
onnx = pytest.importorskip("onnx")


def _net(hidden: int):
    data = mx.sym.Variable("data")
    sym = mx.sym.FullyConnected(data, num_hidden=hidden, name="fc")
    params = {"fc_weight": mx.nd.ones((hidden, 8)), "fc_bias": mx.nd.zeros((hidden,))}
    return sym, params


def _fill_disk_after(monkeypatch, folder, limit: int) -> None:
    """Files opened for writing in ``folder`` take ``limit`` bytes, then fail with ENOSPC (a full disk)."""
    real_open = builtins.open

    class Full:
        def __init__(self, f):
            self.f, self.left = f, limit

        def write(self, data):
            if len(data) > self.left:
                self.f.write(bytes(data[:self.left]))
                self.f.flush()
                self.left = 0
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.left -= len(data)
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def opener(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        name = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else os.path.abspath(file)
        if ("w" in mode or "+" in mode or "a" in mode) and name.startswith(str(folder)):
            return Full(f)
        return f

    monkeypatch.setattr(builtins, "open", opener)


@pytest.mark.parametrize("large_model", [False, True])
def test_a_full_disk_keeps_the_previous_model(tmp_path, monkeypatch, large_model):
    path = str(tmp_path / "m.onnx")
    sym, params = _net(4)
    mx.onnx.export_model(sym, params, [(1, 8)], np.float32, path, large_model=large_model)
    files = sorted(os.listdir(tmp_path))
    before = {n: (tmp_path / n).read_bytes() for n in files}

    big_sym, big_params = _net(4096)  # 128 KiB of weights
    _fill_disk_after(monkeypatch, tmp_path, 1000)
    with pytest.raises(mx.MXNetError, match=r"cannot write .*m\.onnx(\.data)?: No space left on device") as info:
        mx.onnx.export_model(big_sym, big_params, [(1, 8)], np.float32, path, large_model=large_model)
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == files  # no temporary left behind
    assert {n: (tmp_path / n).read_bytes() for n in files} == before
    onnx.checker.check_model(path)


def test_a_large_model_export_replaces_its_data_file(tmp_path):
    """onnx's own writer appends to an existing ``.data`` file: exporting twice doubled it."""
    path = str(tmp_path / "m.onnx")
    sym, params = _net(64)
    mx.onnx.export_model(sym, params, [(1, 8)], np.float32, path, large_model=True)
    size = os.path.getsize(path + ".data")
    mx.onnx.export_model(sym, params, [(1, 8)], np.float32, path, large_model=True)
    assert os.path.getsize(path + ".data") == size
    onnx.checker.check_model(path)
