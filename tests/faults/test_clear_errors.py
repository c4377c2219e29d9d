"""Issue 25, items 9 and 10: sentences instead of bare Python errors, and `mxasync train` keeping the
previous run's metrics."""

from __future__ import annotations

import errno
import json
import os

import pytest

import mxasync as mx
from mxasync import cli
from mxasync.tools import im2rec

pytestmark = pytest.mark.fault

TRAIN = ["train", "--network", "mlp", "--epochs", "1", "--quiet", "--batch-size", "128", "--shift", "0"]


def test_an_array_too_big_to_allocate_says_so():
    with pytest.raises(mx.MXNetError, match=r"cannot allocate an array of shape \(1099511627776, 1099511627776\) "
                                            r"and dtype float32 on cpu\(0\): 4.84e\+24 bytes"):
        mx.nd.zeros((2**40, 2**40))


def test_a_symbol_json_input_naming_a_missing_output_says_so():
    graph = {"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "relu", "name": "r", "inputs": [[0, 7, 0]]}],
             "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]]}
    with pytest.raises(mx.MXNetError, match=r"refers to output 7 of node 0 \('x'\), which has 1 output"):
        mx.sym.load_json(json.dumps(graph)).infer_shape(x=(2, 3))


def test_im2rec_list_into_a_missing_folder(tmp_path, capsys):
    (tmp_path / "img").mkdir()
    assert im2rec.main(["--list", str(tmp_path / "nowhere" / "train"), str(tmp_path / "img")]) == 1
    err = capsys.readouterr().err
    assert "the folder" in err and "nowhere" in err and "does not exist" in err and "Traceback" not in err


def test_im2rec_recursive_stops_at_a_symlink_loop(tmp_path, capsys):
    root = tmp_path / "img"
    (root / "cats").mkdir(parents=True)
    (root / "cats" / "a.jpg").write_bytes(b"not decoded when listing")
    os.symlink(root, root / "cats" / "loop")
    assert im2rec.main(["--list", "--recursive", str(tmp_path / "train"), str(root)]) == 0
    lines = (tmp_path / "train.lst").read_text().splitlines()
    assert [line.split("\t")[-1] for line in lines] == ["cats/a.jpg"]
    assert "a symbolic link leads back to a folder already listed" in capsys.readouterr().err


def test_train_keeps_the_previous_metrics_and_reports_a_full_disk(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert cli.main([*TRAIN, "--out", str(out)]) == 0
    first = (out / "metrics.jsonl").read_text()
    assert cli.main([*TRAIN, "--out", str(out), "--overwrite"]) == 0  # another run in the same folder
    assert "the previous metrics.jsonl is kept as metrics.jsonl.1" in capsys.readouterr().out
    assert (out / "metrics.jsonl.1").read_text() == first  # rotated, not deleted
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 1

    from mxasync.train import report

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(report, "write_file", full)
    assert cli.main([*TRAIN, "--out", str(out), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert "mxasync train:" in err and "No space left on device" in err and "metrics.jsonl" in err, err
    assert "Traceback" not in err
    assert (out / "metrics.jsonl.2").read_text() == first


def test_loading_many_small_arrays_reads_the_file_in_windows(tmp_path):
    """nd.load of many one-element arrays parses them out of a read-ahead window: a few reads for the
    whole file instead of several per array (the cost that made it 9x slower than MXNet's)."""
    import io

    path = tmp_path / "many.params"
    mx.nd.save(str(path), {f"a{i}": mx.nd.array([float(i)]) for i in range(5000)})
    reads = []

    class Counting(io.FileIO):
        def read(self, n=-1):
            reads.append(n)
            return super().read(n)

        def readinto(self, b):
            reads.append(len(b))
            return super().readinto(b)

    with Counting(str(path), "rb") as f:
        got = mx.nd.load(f)
    assert len(got) == 5000 and got["a4999"].asnumpy().tolist() == [4999.0]
    assert len(reads) < 10, len(reads)
